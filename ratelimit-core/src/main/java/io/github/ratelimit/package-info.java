/**
 * The rate limiting model: policies, algorithms, decisions and the {@link io.github.ratelimit.limiter.RateLimiter} that
 * applies them. Nothing in this module depends on Spring.
 */
@NullMarked
package io.github.ratelimit;

import org.jspecify.annotations.NullMarked;
