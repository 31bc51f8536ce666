/**
 * For clients of rate limited APIs: a {@code RestClient}/{@code RestTemplate} interceptor that honours
 * {@code Retry-After} with jitter.
 */
@NullMarked
package io.github.ratelimit.client;

import org.jspecify.annotations.NullMarked;
