// Building the page's elements. Queue names, message bodies and headers are
// user data: they reach the page through text nodes and attribute values
// only (el() below), never through innerHTML.

const SVG_NS = 'http://www.w3.org/2000/svg';

// el('td', {class: 'num', 'data-col': 'visible'}, 'text' or nodes...)
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

export function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

function setAttrs(node, attrs) {
  if (!attrs) return;
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') node.setAttribute('class', v);
    else if (k === 'text') node.textContent = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
}

export function append(node, children) {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

// The address of a queue's page (main.js routes it).
export function queueHref(name) {
  return `#/queue/${encodeURIComponent(name)}`;
}
