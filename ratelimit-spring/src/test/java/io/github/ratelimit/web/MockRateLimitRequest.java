package io.github.ratelimit.web;

import java.security.Principal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executor;

import io.github.ratelimit.engine.RateLimitExchange;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * A request of no web stack, for tests of the engine: headers, a peer address, a principal and attributes, with the
 * response headers the engine had set.
 */
public final class MockRateLimitRequest implements RateLimitRequest, RateLimitExchange {

	private final String method;

	private final Map<String, List<String>> headers = new LinkedHashMap<>();

	private final Map<String, Object> attributes = new LinkedHashMap<>();

	private final HttpHeaders responseHeaders = new HttpHeaders();

	private @Nullable String remoteAddr = "127.0.0.1";

	private @Nullable Principal principal;

	private @Nullable Executor applicationCodeExecutor;

	/**
	 * Create a GET request from 127.0.0.1.
	 */
	public MockRateLimitRequest() {
		this("GET");
	}

	/**
	 * Create a request from 127.0.0.1.
	 * @param method its HTTP method
	 */
	public MockRateLimitRequest(String method) {
		this.method = method;
	}

	public MockRateLimitRequest addHeader(String name, String value) {
		this.headers.computeIfAbsent(name.toLowerCase(Locale.ROOT), (key) -> new ArrayList<>()).add(value);
		return this;
	}

	public MockRateLimitRequest setRemoteAddr(@Nullable String remoteAddr) {
		this.remoteAddr = remoteAddr;
		return this;
	}

	public MockRateLimitRequest setUserPrincipal(@Nullable Principal principal) {
		this.principal = principal;
		return this;
	}

	/** Name the executor the application's code runs on, as a non-blocking stack does. */
	public MockRateLimitRequest setApplicationCodeExecutor(@Nullable Executor executor) {
		this.applicationCodeExecutor = executor;
		return this;
	}

	@Override
	public @Nullable Executor applicationCodeExecutor() {
		return this.applicationCodeExecutor;
	}

	/** The headers the engine had set on the response. */
	public HttpHeaders responseHeaders() {
		return this.responseHeaders;
	}

	@Override
	public String getMethod() {
		return this.method;
	}

	@Override
	public @Nullable String getHeader(String name) {
		List<String> values = this.headers.get(name.toLowerCase(Locale.ROOT));
		return (values != null) ? values.get(0) : null;
	}

	@Override
	public List<String> getHeaders(String name) {
		return List.copyOf(this.headers.getOrDefault(name.toLowerCase(Locale.ROOT), List.of()));
	}

	@Override
	public @Nullable String getRemoteAddr() {
		return this.remoteAddr;
	}

	@Override
	public @Nullable Principal getUserPrincipal() {
		return this.principal;
	}

	@Override
	public Object getNativeRequest() {
		return this;
	}

	@Override
	public @Nullable Object getAttribute(String name) {
		return this.attributes.get(name);
	}

	@Override
	public void setAttribute(String name, Object value) {
		this.attributes.put(name, value);
	}

	@Override
	public RateLimitRequest request() {
		return this;
	}

	@Override
	public void setResponseHeaders(HttpHeaders headers) {
		headers.forEach(this.responseHeaders::put);
	}

}
