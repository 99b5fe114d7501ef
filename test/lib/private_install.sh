# shellcheck shell=bash
# Sourced by test/sanitize.sh (and usable by hand): a private, relocated copy
# of the PostgreSQL 15 installation with its own pgmq, so a special build (the
# sanitizer build) never replaces the pgmq that the system installation and
# other test runs use.
#
# PostgreSQL finds its share/ and lib/ directories relative to the directory
# of the running postgres executable (make_relative_path in src/port/path.c,
# the mechanism behind `make check`'s temporary install). So a tree
#   DIR/usr/lib/postgresql/15/bin/   real copies of postgres, initdb, pg_ctl
#   DIR/usr/lib/postgresql/15/lib/   links to every library except pgmq's
#   DIR/usr/share/postgresql/15/     links to everything, with extension/ a
#                                    real directory without pgmq's files
# is a complete installation once `make install DESTDIR=DIR` adds pgmq to it.
# Executables must be copies: the server resolves symbolic links to find
# itself, and would then use the system directories.

PRIVATE_PG_BIN_SOURCE=${PRIVATE_PG_BIN_SOURCE:-/usr/lib/postgresql/${PG_MAJOR:-15}/bin}

# make_private_install DIR: builds the skeleton above under DIR (replacing an
# earlier one) and prints the bin directory to use.
make_private_install() {
  local root=$1 pg_config bindir sharedir pkglibdir f name
  pg_config=$PRIVATE_PG_BIN_SOURCE/pg_config
  bindir=$("$pg_config" --bindir)
  sharedir=$("$pg_config" --sharedir)
  pkglibdir=$("$pg_config" --pkglibdir)
  rm -rf "$root"
  mkdir -p "$root$bindir" "$root$pkglibdir" "$root$sharedir/extension" || return 1
  for f in postgres initdb pg_ctl; do
    cp "$bindir/$f" "$root$bindir/$f" || return 1
  done
  # postmaster is the same program under its old name; initdb does not need it.
  for f in "$pkglibdir"/*; do
    name=${f##*/}
    case $name in pgmq.so | pgmq) continue ;; esac
    ln -s "$f" "$root$pkglibdir/$name" || return 1
  done
  for f in "$sharedir"/*; do
    name=${f##*/}
    [ "$name" = extension ] && continue
    ln -s "$f" "$root$sharedir/$name" || return 1
  done
  for f in "$sharedir"/extension/*; do
    name=${f##*/}
    case $name in pgmq.control | pgmq--*) continue ;; esac
    ln -s "$f" "$root$sharedir/extension/$name" || return 1
  done
  # The postgres OS user runs these and reads the installed files.
  chmod -R a+rX "$root"
  echo "$root$bindir"
}
