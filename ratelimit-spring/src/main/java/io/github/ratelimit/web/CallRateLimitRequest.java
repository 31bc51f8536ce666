package io.github.ratelimit.web;

import java.security.Principal;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * A call that is not itself an HTTP request (a chat model's call, an MCP tool's) as the engine sees a request. The
 * HTTP request it is made within, if any, gives its method, headers, client address and principal, so that a limit
 * keyed by the client's address or user is the HTTP caller's; its attributes are its own, so that what it holds is
 * settled apart from that request.
 *
 * @since 0.5.0
 */
public abstract class CallRateLimitRequest implements RateLimitRequest {

	private final @Nullable RateLimitRequest http;

	private final Map<String, Object> attributes = new ConcurrentHashMap<>();

	/**
	 * Create the request of a call.
	 * @param http the HTTP request the call is made within, or {@code null}
	 */
	protected CallRateLimitRequest(@Nullable RateLimitRequest http) {
		this.http = http;
	}

	@Override
	public String getMethod() {
		return (this.http != null) ? this.http.getMethod() : "POST";
	}

	@Override
	public @Nullable String getHeader(String name) {
		return (this.http != null) ? this.http.getHeader(name) : null;
	}

	@Override
	public List<String> getHeaders(String name) {
		return (this.http != null) ? this.http.getHeaders(name) : List.of();
	}

	@Override
	public @Nullable String getRemoteAddr() {
		return (this.http != null) ? this.http.getRemoteAddr() : null;
	}

	@Override
	public @Nullable Principal getUserPrincipal() {
		return (this.http != null) ? this.http.getUserPrincipal() : null;
	}

	@Override
	public @Nullable Object getAttribute(String name) {
		return this.attributes.get(name);
	}

	@Override
	public void setAttribute(String name, Object value) {
		this.attributes.put(name, value);
	}

}
