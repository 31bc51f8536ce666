/**
 * Interception of {@link io.github.ratelimit.annotation.RateLimited @RateLimited} methods: start-up discovery and
 * validation, SpEL keys and costs, and the interceptor that asks the {@link io.github.ratelimit.limiter.RateLimiter}.
 */
@NullMarked
package io.github.ratelimit.aop;

import org.jspecify.annotations.NullMarked;
