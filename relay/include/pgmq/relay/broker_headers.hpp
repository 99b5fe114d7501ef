// relay/include/pgmq/relay/broker_headers.hpp
// The message headers RabbitMQ itself acts on. A producer's message carrying
// one would steer the broker (extra routes, forged protocol sections) instead
// of informing consumers, so the relay refuses it. Every other header, x-
// names included (pgmq's x-pgmq-*, an application's x-trace-id), is data for
// consumers and is passed through. Pure.
#pragma once

#include <string_view>

namespace pgmq::relay {

// What RabbitMQ does with a header of this name, for the refusal reason; ""
// when it leaves the header to consumers. Names compare exactly, as RabbitMQ
// looks header tables up byte for byte ("cc" is not "CC").
std::string_view BrokerUseOfHeader(std::string_view name);

}  // namespace pgmq::relay
