/**
 * The in-memory store and the arithmetic of every algorithm. The Redis store's Lua scripts repeat the same integer
 * arithmetic, and one conformance suite holds the two to the same decisions.
 */
@NullMarked
package io.github.ratelimit.memory;

import org.jspecify.annotations.NullMarked;
