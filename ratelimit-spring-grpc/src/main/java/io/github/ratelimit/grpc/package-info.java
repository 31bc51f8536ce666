/**
 * The gRPC entry point of the policy engine: {@code @RateLimited} on the methods of gRPC services, decided as each
 * call starts by a server interceptor, answered with {@code RESOURCE_EXHAUSTED} and a {@code google.rpc.RetryInfo},
 * and settled from the call's final status. It decides nothing itself: the engine does.
 */
@NullMarked
package io.github.ratelimit.grpc;

import org.jspecify.annotations.NullMarked;
