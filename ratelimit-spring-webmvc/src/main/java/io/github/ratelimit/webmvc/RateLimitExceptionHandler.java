package io.github.ratelimit.webmvc;

import io.github.ratelimit.web.InvalidRateLimitCostException;
import io.github.ratelimit.web.RateLimitException;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Renders rate limit rejections as RFC 9457 problems: {@code 429} when a limit is exceeded, {@code 503} when the
 * store failed and the policy fails closed, {@code 400} for an invalid request cost. The rate limit headers
 * ({@code Retry-After} included) are already on the response, set by the interceptor; a 429 or 503 whose headers
 * writer (an application's own) left {@code Retry-After} out gets it here.
 * <p>
 * Ordered last, so that an application's own {@code @ExceptionHandler} for these exceptions wins. Note that an
 * application advice handling {@code Exception} catches them too: handle {@link ErrorResponseException} there (or
 * these types) to keep their status.
 *
 * @since 0.2.0
 */
@RestControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class RateLimitExceptionHandler {

	/**
	 * Render a rejection.
	 * @param ex the rejection
	 * @param response the response, which already carries the rate limit headers
	 * @return the problem
	 */
	@ExceptionHandler({ RateLimitException.class, InvalidRateLimitCostException.class })
	public ResponseEntity<ProblemDetail> handleRateLimitException(ErrorResponseException ex,
			HttpServletResponse response) {
		if (ex instanceof RateLimitException rejection && !response.containsHeader(HttpHeaders.RETRY_AFTER)
				&& rejection.getRetryAfterSeconds() > 0) {
			response.setHeader(HttpHeaders.RETRY_AFTER, Long.toString(rejection.getRetryAfterSeconds()));
		}
		return ResponseEntity.status(ex.getStatusCode()).body(ex.getBody());
	}

}
