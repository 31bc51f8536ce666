/**
 * The store SPI: where counters live and where each decision is made atomically.
 */
@NullMarked
package io.github.ratelimit.store;

import org.jspecify.annotations.NullMarked;
