package io.github.ratelimit.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.ExecutionException;

import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * Limits the calls of a {@code RestClient} or {@code RestTemplate} by a policy: a unit before each call, then what
 * the called service answered is learned (see {@link OutboundRateLimits}). The calling thread waits for its turn, as
 * long as the policy's {@code max-wait} at most.
 */
final class RateLimitedClientInterceptor implements ClientHttpRequestInterceptor {

	private final OutboundPolicy policy;

	RateLimitedClientInterceptor(OutboundPolicy policy) {
		this.policy = policy;
	}

	@Override
	public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		String host = OutboundRateLimits.host(request.getURI());
		try {
			this.policy.acquire(host).toCompletableFuture().get();
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException cause) {
				throw cause;
			}
			throw new IllegalStateException(ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new InterruptedIOException("Interrupted while waiting for a turn under rate limit policy");
		}
		ClientHttpResponse response = execution.execute(request, body);
		this.policy.learn(host, response.getStatusCode(), response.getHeaders());
		return response;
	}

}
