/**
 * Argument checks and duration formatting shared by the modules of this project. Not an API: it may change in any
 * release.
 */
@NullMarked
package io.github.ratelimit.internal;

import org.jspecify.annotations.NullMarked;
