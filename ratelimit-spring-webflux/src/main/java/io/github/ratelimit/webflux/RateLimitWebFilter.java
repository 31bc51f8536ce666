package io.github.ratelimit.webflux;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RateLimitExchange;
import io.github.ratelimit.engine.RateLimitOutcome;
import io.github.ratelimit.web.RateLimitRequest;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.core.Ordered;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * The filter layer on WebFlux: limits applied before dispatch ({@code ratelimit.filters.*}), so that abusive traffic
 * is rejected before authentication, argument resolution and message conversion, and a path that matches no handler
 * still counts. The engine decides without blocking; this filter hands it the exchange and writes the outcome back (a
 * rejection as the method layer answers it: 429, headers, problem body).
 * <p>
 * It also hands the request to the method layer (in the Reactor context of what it subscribes to), and settles the
 * policies that count by outcome, of every layer, from the status the client gets, as the response is committed. So
 * it is registered even without filters.
 *
 * @since 0.2.0
 */
public final class RateLimitWebFilter implements WebFilter, Ordered {

	/** The Reactor context key under which the method layer finds the request. */
	private static final String CONTEXT_KEY = RateLimitWebFilter.class.getName() + ".request";

	private final RateLimitEngine engine;

	private final int order;

	/**
	 * Create the filter.
	 * @param engine the engine that decides
	 * @param order its order among the web filters: before Spring Security's ({@code -100})
	 */
	public RateLimitWebFilter(RateLimitEngine engine, int order) {
		this.engine = engine;
		this.order = order;
	}

	@Override
	public int getOrder() {
		return this.order;
	}

	/**
	 * Return whether any filter is configured.
	 * @return whether the filter layer has filters
	 */
	public boolean hasFilters() {
		return this.engine.catalog().hasFilters();
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		ExchangeRateLimitRequest request = ExchangeRateLimitRequest.of(exchange);
		this.engine.settledByStack(request);
		exchange.getResponse().beforeCommit(() -> settle(request, exchange.getResponse()));
		Mono<Void> proceed = chain.filter(exchange).contextWrite((context) -> context.put(CONTEXT_KEY, request));
		if (!this.engine.catalog().hasFilters()) {
			return proceed;
		}
		return exchange.getPrincipal()
			.doOnNext(request::setPrincipal)
			.then(Mono.fromCompletionStage(() -> this.engine.decideFiltersAsync(request,
					List.of(exchange.getRequest().getPath().pathWithinApplication()))))
			.flatMap((outcome) -> {
				request.setResponseHeaders(outcome.headers());
				ErrorResponseException rejection = outcome.rejection();
				return (rejection != null) ? reject(exchange.getResponse(), rejection, outcome) : proceed;
			});
	}

	/**
	 * Return the engine's view of an exchange: the one every layer of the request shares (the filter layer, the
	 * method layer, the settlement of what policies counting by outcome took), for adapters built on WebFlux such as
	 * Spring Cloud Gateway's limiter.
	 * @param exchange the exchange
	 * @return its view, created on first use
	 */
	public static RateLimitExchange exchangeOf(ServerWebExchange exchange) {
		return ExchangeRateLimitRequest.of(exchange);
	}

	/** Return the request the filter handed to what it subscribed to, or {@code null} outside of a request. */
	static @Nullable RateLimitRequest request(ContextView context) {
		return context.getOrDefault(CONTEXT_KEY, null);
	}

	private static Mono<Void> reject(ServerHttpResponse response, ErrorResponseException rejection,
			RateLimitOutcome outcome) {
		response.setStatusCode(rejection.getStatusCode());
		response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		byte[] body = outcome.problemJson().getBytes(StandardCharsets.UTF_8);
		return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
	}

	/** Every layer's policies that count by outcome, from the status the client gets, without waiting for them. */
	private Mono<Void> settle(ExchangeRateLimitRequest request, ServerHttpResponse response) {
		if (this.engine.hasPendingSettlement(request)) {
			HttpStatusCode status = response.getStatusCode();
			this.engine.settleRequestAsync(request, (status != null) ? status.value() : 200);
		}
		return Mono.empty();
	}

}
