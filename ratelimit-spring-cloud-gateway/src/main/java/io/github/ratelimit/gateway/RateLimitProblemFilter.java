package io.github.ratelimit.gateway;

import java.nio.charset.StandardCharsets;

import io.github.ratelimit.engine.RateLimitOutcome;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.server.ServerWebExchange;

/**
 * Gives a route that {@link GatewayRateLimiter} rejected the same answer as any other rejection: the gateway's
 * {@code RequestRateLimiter} filter completes a rejected response with its status and the limiter's headers but no
 * body, so the response is decorated to write the problem when it completes. A rejection that does not say the client
 * is over its limit keeps its own status whatever the route's {@code status-code}, which states that: a store that
 * failed under {@code failure-mode: deny} is 503, as on Spring MVC and WebFlux, not a 429 that clients and alerts would
 * take for a client over its limit; so is a route that uses the limiter without a limit. It also hands the exchange to
 * the limiter, which the gateway's {@code RateLimiter} contract leaves out. Ordered before every route filter.
 *
 * @since 0.2.0
 */
public final class RateLimitProblemFilter implements GlobalFilter, Ordered {

	/** The Reactor context key under which the limiter finds the exchange. */
	private static final String EXCHANGE = RateLimitProblemFilter.class.getName() + ".exchange";

	/** The exchange attribute holding the outcome of a route the limiter rejected. */
	static final String REJECTED = RateLimitProblemFilter.class.getName() + ".rejected";

	/** The exchange attribute set when the route uses the limiter but declares no limit. */
	static final String UNDECLARED = RateLimitProblemFilter.class.getName() + ".undeclared";

	private static final byte[] UNDECLARED_PROBLEM = ("{\"type\":\"about:blank\",\"title\":\"Service Unavailable\","
			+ "\"status\":503,\"detail\":\"Rate limiting of this route is not configured.\"}")
		.getBytes(StandardCharsets.UTF_8);

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
			if (isCommitted()) {
				return super.setComplete();
			}
			if (this.exchange.getAttribute(UNDECLARED) != null) {
				return problem(HttpStatus.SERVICE_UNAVAILABLE, UNDECLARED_PROBLEM);
			}
			RateLimitOutcome outcome = this.exchange.getAttribute(REJECTED);
			ErrorResponseException rejection = (outcome != null) ? outcome.rejection() : null;
			if (outcome == null || rejection == null) {
				return super.setComplete();
			}
			// Over the limit: the route's status-code rules, and a route configured with another gets no body.
			if (rejection.getStatusCode().value() == HttpStatus.TOO_MANY_REQUESTS.value()
					&& !rejection.getStatusCode().equals(getStatusCode())) {
				return super.setComplete();
			}
			// The path the client sent, not one a route filter rewrote: this exchange is the one before them.
			String instance = this.exchange.getRequest().getPath().value();
			return problem(rejection.getStatusCode(), outcome.problemJson(instance).getBytes(StandardCharsets.UTF_8));
		}

		private Mono<Void> problem(HttpStatusCode status, byte[] body) {
			setStatusCode(status);
			getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
			return writeWith(Mono.just(bufferFactory().wrap(body)));
		}

	}

}
