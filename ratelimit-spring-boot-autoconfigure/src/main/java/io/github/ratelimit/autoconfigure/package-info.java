/**
 * Auto-configuration for rate limiting.
 */
@NullMarked
package io.github.ratelimit.autoconfigure;

import org.jspecify.annotations.NullMarked;
