/**
 * The Redis store: one Lua script per algorithm, one round trip per decision, time from Redis, keys in one hash slot.
 */
@NullMarked
package io.github.ratelimit.redis;

import org.jspecify.annotations.NullMarked;
