/**
 * The Micrometer observation of a rate limit decision ({@code ratelimit.decision}).
 */
@NullMarked
package io.github.ratelimit.observation;

import org.jspecify.annotations.NullMarked;
