package io.github.ratelimit.webflux;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.security.Principal;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

import io.github.ratelimit.engine.RateLimitExchange;
import io.github.ratelimit.web.RateLimitRequest;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Schedulers;

import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * A reactive exchange as the engine sees it: one per exchange, kept in its attributes (which every mutated copy of
 * the exchange shares), so that the filter layer and the method layer see the same request.
 */
final class ExchangeRateLimitRequest implements RateLimitRequest, RateLimitExchange {

	private static final String ATTRIBUTE = ExchangeRateLimitRequest.class.getName();

	private static final Executor APPLICATION_CODE = (task) -> Schedulers.boundedElastic().schedule(task);

	private final ServerWebExchange exchange;

	private volatile @Nullable Principal principal;

	private ExchangeRateLimitRequest(ServerWebExchange exchange) {
		this.exchange = exchange;
	}

	/** Return the exchange's request, created on first use. */
	static ExchangeRateLimitRequest of(ServerWebExchange exchange) {
		if (exchange.getAttribute(ATTRIBUTE) instanceof ExchangeRateLimitRequest request) {
			return request;
		}
		ExchangeRateLimitRequest request = new ExchangeRateLimitRequest(exchange);
		exchange.getAttributes().put(ATTRIBUTE, request);
		return request;
	}

	/**
	 * Reactor's bounded elastic scheduler: the application's code that a policy calls (beans in key, cost, skip and
	 * tenant expressions, the plan resolver) may block, which an event loop must not.
	 */
	@Override
	public Executor applicationCodeExecutor() {
		return APPLICATION_CODE;
	}

	/** Return the exchange. */
	ServerWebExchange exchange() {
		return this.exchange;
	}

	/** Set the principal, resolved reactively before a layer is decided. */
	void setPrincipal(Principal principal) {
		this.principal = principal;
	}

	@Override
	public RateLimitRequest request() {
		return this;
	}

	@Override
	public void setResponseHeaders(HttpHeaders headers) {
		ServerHttpResponse response = this.exchange.getResponse();
		if (!response.isCommitted()) {
			headers.forEach((name, values) -> response.getHeaders().put(name, new ArrayList<>(values)));
		}
	}

	@Override
	public String getMethod() {
		return this.exchange.getRequest().getMethod().name();
	}

	@Override
	public @Nullable String getHeader(String name) {
		return this.exchange.getRequest().getHeaders().getFirst(name);
	}

	@Override
	public List<String> getHeaders(String name) {
		return this.exchange.getRequest().getHeaders().getOrEmpty(name);
	}

	/** The peer's address as a literal: never resolved to a name. */
	@Override
	public @Nullable String getRemoteAddr() {
		InetSocketAddress address = this.exchange.getRequest().getRemoteAddress();
		if (address == null) {
			return null;
		}
		InetAddress resolved = address.getAddress();
		return (resolved != null) ? resolved.getHostAddress() : address.getHostString();
	}

	@Override
	public @Nullable Principal getUserPrincipal() {
		return this.principal;
	}

	/** The {@code ServerHttpRequest}: key, cost and skip expressions see it as {@code #request}. */
	@Override
	public Object getNativeRequest() {
		return this.exchange.getRequest();
	}

	/** The {@code ServerWebExchange}: key, cost and skip expressions see it as {@code #exchange}. */
	@Override
	public Object getNativeExchange() {
		return this.exchange;
	}

	@Override
	public @Nullable Object getAttribute(String name) {
		return this.exchange.getAttribute(name);
	}

	@Override
	public void setAttribute(String name, Object value) {
		this.exchange.getAttributes().put(name, value);
	}

}
