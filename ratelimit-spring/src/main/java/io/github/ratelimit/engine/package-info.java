/**
 * The policy engine: the catalogue of every policy (from {@code @RateLimited} and configuration, with plans), and
 * the decision of one request's limits, layer by layer, into an outcome that web stacks write back. Nothing here
 * knows a servlet or a reactive type.
 */
@NullMarked
package io.github.ratelimit.engine;

import org.jspecify.annotations.NullMarked;
