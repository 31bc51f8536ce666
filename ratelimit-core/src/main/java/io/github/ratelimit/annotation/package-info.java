/**
 * The {@link io.github.ratelimit.annotation.RateLimited @RateLimited} annotation. It has no dependencies, so it can
 * sit on classes of any framework.
 */
@NullMarked
package io.github.ratelimit.annotation;

import org.jspecify.annotations.NullMarked;
