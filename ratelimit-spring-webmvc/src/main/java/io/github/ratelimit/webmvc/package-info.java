/**
 * Spring MVC adapters of the policy engine: the servlet filter of the filter layer, the request and response of
 * {@code @RateLimited} methods, the 429 advice and the {@code RateLimitStatus} argument. They decide nothing: the
 * engine does.
 */
@NullMarked
package io.github.ratelimit.webmvc;

import org.jspecify.annotations.NullMarked;
