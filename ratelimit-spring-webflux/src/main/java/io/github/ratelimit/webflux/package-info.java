/**
 * Spring WebFlux adapters of the policy engine: the {@code WebFilter} of the filter layer, the interceptor of
 * {@code @RateLimited} methods returning reactive types, the 429 advice and the {@code RateLimitStatus} argument.
 * They decide nothing (the engine does), and never block an event loop: every decision is the engine's non-blocking
 * one, subscribed to as the request is.
 */
@NullMarked
package io.github.ratelimit.webflux;

import org.jspecify.annotations.NullMarked;
