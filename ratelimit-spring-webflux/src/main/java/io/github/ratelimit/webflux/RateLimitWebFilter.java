package io.github.ratelimit.webflux;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

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
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * The filter layer on WebFlux: limits applied before dispatch ({@code ratelimit.filters.*}), so that abusive traffic
 * is rejected before authentication, argument resolution and message conversion, and a path that matches no handler
 * still counts. A filter applies to the path as sent and to the path cleaned up (repeated slashes merged, dot segments
 * resolved, encoded separators decoded, path parameters and a trailing slash dropped), as a gateway forwards it or a
 * service behind one resolves it. The engine decides without blocking; this filter hands it the exchange and writes
 * the outcome back (a rejection as the method layer answers it: 429, headers, problem body).
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
		Mono<Void> proceed = chain.filter(exchange).contextWrite((context) -> context.put(CONTEXT_KEY, request));
		if (this.engine.catalog().settlesAfterResponse()) {
			this.engine.settlement().settledByStack(request);
			exchange.getResponse().beforeCommit(() -> settle(request, exchange.getResponse()));
			// Concurrency limits' slots once the exchange ended however it ended: written, failed or cancelled.
			return decide(exchange, request, proceed)
				.doFinally((signal) -> this.engine.settlement().releaseRequestAsync(request));
		}
		return decide(exchange, request, proceed);
	}

	private Mono<Void> decide(ServerWebExchange exchange, ExchangeRateLimitRequest request, Mono<Void> proceed) {
		if (!this.engine.catalog().hasFilters()) {
			return proceed;
		}
		List<PathContainer> paths = PathSpellings.of(exchange.getRequest().getPath().pathWithinApplication());
		if (!this.engine.catalog().hasFilterFor(exchange.getRequest().getMethod().name(), paths)) {
			return proceed; // no filter applies: no principal to resolve, no decision, no change of thread
		}
		return exchange.getPrincipal()
			.doOnNext(request::setPrincipal)
			.then(RequestThread.resume(exchange, () -> this.engine.decideFiltersAsync(request, paths)))
			.flatMap((outcome) -> {
				request.setResponseHeaders(outcome.headers());
				ErrorResponseException rejection = outcome.rejection();
				return (rejection != null) ? reject(exchange, rejection, outcome) : proceed;
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

	/**
	 * Return a decision that signals on the exchange's own thread: at once where it was decided at once, else on the
	 * event loop of the exchange's connection (another server's request: on Reactor's parallel scheduler), never on
	 * the thread of the store's client or of a timer, so that what the request does next (routing, the handler, writing
	 * the response) delays no other decision. For adapters built on WebFlux such as Spring Cloud Gateway's limiter.
	 * @param exchange the exchange, or {@code null} if unknown (then the parallel scheduler)
	 * @param decision starts the decision when subscribed to
	 * @param <T> the decision's type
	 * @return the decision
	 * @since 0.3.0
	 */
	public static <T> Mono<T> onRequestThread(@Nullable ServerWebExchange exchange,
			Supplier<? extends CompletionStage<T>> decision) {
		return RequestThread.resume(exchange, decision);
	}

	/** Return the request the filter handed to what it subscribed to, or {@code null} outside of a request. */
	static @Nullable RateLimitRequest request(ContextView context) {
		return context.getOrDefault(CONTEXT_KEY, null);
	}

	private static Mono<Void> reject(ServerWebExchange exchange, ErrorResponseException rejection,
			RateLimitOutcome outcome) {
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(rejection.getStatusCode());
		response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		// The instance as WebFlux names the method layer's: the request's path, raw, context path included.
		String instance = exchange.getRequest().getPath().value();
		byte[] body = outcome.problemJson(instance).getBytes(StandardCharsets.UTF_8);
		return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
	}

	/** Every layer's policies that count by outcome, from the status the client gets, without waiting for them. */
	private Mono<Void> settle(ExchangeRateLimitRequest request, ServerHttpResponse response) {
		if (this.engine.settlement().hasPendingSettlement(request)) {
			HttpStatusCode status = response.getStatusCode();
			this.engine.settlement().settleRequestAsync(request, (status != null) ? status.value() : 200);
		}
		return Mono.empty();
	}

}
