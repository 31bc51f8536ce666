/**
 * HTTP integration: response headers, the client's IP address, and the exceptions rendered as 429, 503 and 400.
 */
@NullMarked
package io.github.ratelimit.web;

import org.jspecify.annotations.NullMarked;
