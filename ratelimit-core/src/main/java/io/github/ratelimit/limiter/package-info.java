/**
 * The {@link io.github.ratelimit.limiter.RateLimiter}: what surrounds every store decision (key bounds, the local
 * deny cache, the circuit breaker and the failure modes).
 */
@NullMarked
package io.github.ratelimit.limiter;

import org.jspecify.annotations.NullMarked;
