package io.github.ratelimit.client;

import reactor.core.publisher.Mono;

import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;

/**
 * Limits the calls of a {@code WebClient} by a policy: a unit before each call, waiting for its turn on a timer (up to
 * the policy's {@code max-wait}, no thread blocked), then what the called service answered is learned (see
 * {@link OutboundRateLimits}). A call over the limit fails with {@link OutboundRateLimitException}.
 *
 * @since 0.5.0
 */
public final class RateLimitedExchangeFilter implements ExchangeFilterFunction {

	private final OutboundPolicy policy;

	private RateLimitedExchangeFilter(OutboundPolicy policy) {
		this.policy = policy;
	}

	/**
	 * Return a filter that limits a {@code WebClient}'s calls by a policy.
	 * @param limits the application's outbound limits
	 * @param policy the policy's name, configured under {@code ratelimit.policies.<name>}
	 * @return the filter
	 * @throws io.github.ratelimit.engine.InvalidRateLimitPolicyException if the policy is not configured, or
	 * invalid, naming the property
	 */
	public static RateLimitedExchangeFilter of(OutboundRateLimits limits, String policy) {
		return new RateLimitedExchangeFilter(limits.policy(policy));
	}

	@Override
	public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
		String host = OutboundRateLimits.host(request.url());
		return Mono.fromCompletionStage(() -> this.policy.acquire(host))
			.then(Mono.defer(() -> next.exchange(request)))
			.doOnNext((response) -> this.policy.learn(host, response.statusCode(), response.headers().asHttpHeaders()));
	}

}
