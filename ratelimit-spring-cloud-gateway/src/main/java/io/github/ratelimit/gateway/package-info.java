/**
 * Spring Cloud Gateway adapters of the policy engine: a {@code RateLimiter} for the gateway's
 * {@code RequestRateLimiter} filter, a {@code KeyResolver} of the trusted-proxy client IP, and the problem body of a
 * rejected route. They decide nothing (the engine does) and never block an event loop.
 */
@NullMarked
package io.github.ratelimit.gateway;

import org.jspecify.annotations.NullMarked;
