package io.github.ratelimit.web;

import java.security.Principal;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;

import org.jspecify.annotations.Nullable;

/**
 * The request a rate limit is decided for, as every web stack sees it: what client addresses, plans and keys are read
 * from. Each web stack adapts its own request (a servlet request, a reactive exchange) into it; key expressions still
 * see the stack's own request as {@code #request} ({@link #getNativeRequest()}).
 *
 * @since 0.2.0
 */
public interface RateLimitRequest {

	/**
	 * Return the HTTP method.
	 * @return the method, such as {@code GET}
	 */
	String getMethod();

	/**
	 * Return the first value of a request header.
	 * @param name the header's name, in any case
	 * @return the value, or {@code null} if the request has none
	 */
	@Nullable String getHeader(String name);

	/**
	 * Return every value of a request header, in the order they came (each header line's whole value).
	 * @param name the header's name, in any case
	 * @return the values, empty if the request has none
	 */
	List<String> getHeaders(String name);

	/**
	 * Return the address of the connection's peer, as the server reports it.
	 * @return the address, or {@code null} if the server knows none
	 */
	@Nullable String getRemoteAddr();

	/**
	 * Return the authenticated principal of the request.
	 * @return the principal, or {@code null} if there is none
	 */
	@Nullable Principal getUserPrincipal();

	/**
	 * Return the web stack's own request ({@code HttpServletRequest}, {@code ServerHttpRequest}): key, cost and skip
	 * expressions see it as {@code #request}.
	 * @return the native request
	 */
	Object getNativeRequest();

	/**
	 * Return the web stack's exchange of request and response, if it has one (WebFlux's {@code ServerWebExchange}):
	 * key, cost and skip expressions see it as {@code #exchange}, unless a method parameter has that name.
	 * @return the native exchange, or {@code null}
	 * @since 0.2.0
	 */
	default @Nullable Object getNativeExchange() {
		return null;
	}

	/**
	 * Return further variables that key, cost and skip expressions see by name: what a stack that is not HTTP has
	 * besides its request (gRPC's {@code #metadata}, an MCP tool call's {@code #session}). They win over a method's
	 * parameter of the same name, whose value a client chooses (expressions still see it as {@code #p0}, {@code #p1},
	 * ...); names of the engine's own ({@code request}, {@code principal}, {@code clientIp}, {@code exchange}) are not
	 * for them.
	 * @return the variables by name, empty for none
	 * @since 0.5.0
	 */
	default Map<String, Object> getExpressionVariables() {
		return Map.of();
	}

	/**
	 * Return where application code may run for this request when the request's own thread must not block: the key,
	 * cost, skip and tenant expressions of a policy that call the application's beans (or static methods, or
	 * constructors), and the plan resolver. A non-blocking web stack returns an executor whose threads may wait (on
	 * WebFlux, Reactor's bounded elastic scheduler), so that such code never runs on an event loop; expressions that
	 * only read the request and the method's arguments stay on the calling thread.
	 * @return the executor, or {@code null} to run everything on the calling thread (a thread that may block)
	 * @since 0.3.0
	 */
	default @Nullable Executor applicationCodeExecutor() {
		return null;
	}

	/**
	 * Return a request attribute.
	 * @param name the attribute's name
	 * @return its value, or {@code null}
	 */
	@Nullable Object getAttribute(String name);

	/**
	 * Set a request attribute, for the layers after this one and for the handler ({@link RateLimitStatus}).
	 * @param name the attribute's name
	 * @param value its value
	 */
	void setAttribute(String name, Object value);

}
