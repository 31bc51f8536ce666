/**
 * Micrometer counters of rate limit decisions.
 */
@NullMarked
package io.github.ratelimit.metrics;

import org.jspecify.annotations.NullMarked;
