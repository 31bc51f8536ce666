/**
 * Interception of {@link io.github.ratelimit.annotation.RateLimited @RateLimited} methods: the post-processor that
 * proxies their beans, and the interceptor that has the engine decide each invocation.
 */
@NullMarked
package io.github.ratelimit.aop;

import org.jspecify.annotations.NullMarked;
