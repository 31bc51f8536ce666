/**
 * For the tests of applications using the starter: {@link io.github.ratelimit.testing.ResetRateLimits} forgets every
 * counter before each test, and {@link io.github.ratelimit.testing.RateLimitTestClock} is a clock the tests move.
 */
@NullMarked
package io.github.ratelimit.testing;

import org.jspecify.annotations.NullMarked;
