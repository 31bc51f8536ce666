package io.github.ratelimit.gateway;

import java.nio.charset.StandardCharsets;

import io.github.ratelimit.engine.RateLimitOutcome;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.core.Ordered;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.server.ServerWebExchange;

/**
 * Gives a route that {@link GatewayRateLimiter} rejected the same problem body as any other rejection: the gateway's
 * {@code RequestRateLimiter} filter completes a rejected response with its status and the limiter's headers but no
 * body, so the response is decorated to write the problem when it completes. It also hands the exchange to the
 * limiter, which the gateway's {@code RateLimiter} contract leaves out. Ordered before every route filter.
 *
 * @since 0.2.0
 */
public final class RateLimitProblemFilter implements GlobalFilter, Ordered {

	/** The Reactor context key under which the limiter finds the exchange. */
	private static final String EXCHANGE = RateLimitProblemFilter.class.getName() + ".exchange";

	/** The exchange attribute holding the outcome of a route the limiter rejected. */
	static final String REJECTED = RateLimitProblemFilter.class.getName() + ".rejected";

	/** Before the route filters (ordered from 1) and the gateway's routing filters. */
	static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 10_000;

	@Override
	public int getOrder() {
		return ORDER;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
		ServerWebExchange decorated = exchange.mutate()
			.response(new ProblemOnRejection(exchange.getResponse(), exchange))
			.build();
		return chain.filter(decorated).contextWrite((context) -> context.put(EXCHANGE, decorated));
	}

	/** Return the exchange of the route being decided, or {@code null} outside of this filter. */
	static @Nullable ServerWebExchange exchange(ContextView context) {
		return context.getOrDefault(EXCHANGE, null);
	}

	private static final class ProblemOnRejection extends ServerHttpResponseDecorator {

		private final ServerWebExchange exchange;

		ProblemOnRejection(ServerHttpResponse delegate, ServerWebExchange exchange) {
			super(delegate);
			this.exchange = exchange;
		}

		@Override
		public Mono<Void> setComplete() {
			RateLimitOutcome outcome = this.exchange.getAttribute(REJECTED);
			ErrorResponseException rejection = (outcome != null) ? outcome.rejection() : null;
			// Only with the status the problem states: a route configured with another status gets no body.
			if (outcome == null || rejection == null || isCommitted()
					|| !rejection.getStatusCode().equals(getStatusCode())) {
				return super.setComplete();
			}
			getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
			byte[] body = outcome.problemJson().getBytes(StandardCharsets.UTF_8);
			return writeWith(Mono.just(bufferFactory().wrap(body)));
		}

	}

}
