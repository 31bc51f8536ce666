package io.github.ratelimit.client;

import org.apache.hc.client5.http.HttpRequestRetryStrategy;
import org.apache.hc.client5.http.impl.DefaultHttpRequestRetryStrategy;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.util.TimeValue;

/**
 * Apache HttpClient 5's retries, without those of responses: by default that client retries a {@code 429} or
 * {@code 503} by itself, inside the request {@link RetryAfterInterceptor} sees, sleeping whatever
 * {@code Retry-After} says (a hostile server's 99999999999 seconds included), so that none of the interceptor's
 * bounds applies. Give the client this strategy ({@code HttpClientBuilder.setRetryStrategy}) and leave
 * {@code Retry-After} to the interceptor; failed connections are still retried as HttpClient does by default. Spring
 * Boot applications get it through the starter's auto-configuration.
 *
 * @since 0.2.0
 */
public final class HttpComponentsRetries {

	private HttpComponentsRetries() {
	}

	/**
	 * Return HttpClient's default strategy for failed connections (one retry after a second), retrying no response.
	 * @return the strategy
	 */
	public static HttpRequestRetryStrategy connectionFailuresOnly() {
		return new ConnectionFailuresOnly();
	}

	private static final class ConnectionFailuresOnly extends DefaultHttpRequestRetryStrategy {

		ConnectionFailuresOnly() {
			super(1, TimeValue.ofSeconds(1));
		}

		@Override
		public boolean retryRequest(HttpResponse response, int execCount, HttpContext context) {
			return false;
		}

	}

}
