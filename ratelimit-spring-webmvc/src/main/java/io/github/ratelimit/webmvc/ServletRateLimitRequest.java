package io.github.ratelimit.webmvc;

import java.security.Principal;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;

import io.github.ratelimit.engine.RateLimitExchange;
import io.github.ratelimit.web.RateLimitRequest;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ResponseEntity;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.WebAsyncTask;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;

/**
 * A servlet request and its response as the engine sees them.
 *
 * @since 0.2.0
 */
public final class ServletRateLimitRequest implements RateLimitRequest, RateLimitExchange {

	/** The request attribute holding the request's adapter. */
	private static final String ATTRIBUTE = ServletRateLimitRequest.class.getName();

	private final HttpServletRequest request;

	private final @Nullable HttpServletResponse response;

	private ServletRateLimitRequest(HttpServletRequest request, @Nullable HttpServletResponse response) {
		this.request = request;
		this.response = response;
	}

	/**
	 * Return the adapter of a request: a view, its state in the request's attributes. Built once per request and
	 * response: the filter's adapter is the one the method layer finds, unless a filter in between wrapped either.
	 * @param request the request
	 * @param response its response, or {@code null} if unknown
	 * @return the adapter
	 */
	public static ServletRateLimitRequest of(HttpServletRequest request, @Nullable HttpServletResponse response) {
		if (request.getAttribute(ATTRIBUTE) instanceof ServletRateLimitRequest known && known.request == request
				&& known.response == response) {
			return known;
		}
		ServletRateLimitRequest adapter = new ServletRateLimitRequest(request, response);
		request.setAttribute(ATTRIBUTE, adapter);
		return adapter;
	}

	@Override
	public RateLimitRequest request() {
		return this;
	}

	@Override
	public void setResponseHeaders(HttpHeaders headers) {
		HttpServletResponse response = this.response;
		if (response != null) {
			headers.forEach((name, values) -> {
				response.setHeader(name, values.isEmpty() ? "" : values.get(0));
				for (int i = 1; i < values.size(); i++) {
					response.addHeader(name, values.get(i));
				}
			});
		}
	}

	/**
	 * Return whether Spring MVC serves the result after the method returns, as an asynchronous request: the results
	 * its return value handlers start asynchronous processing for, alone or as a {@code ResponseEntity}'s body.
	 */
	@Override
	public boolean completesLater(@Nullable Object result) {
		Object body = (result instanceof ResponseEntity<?> entity) ? entity.getBody() : result;
		return body instanceof ResponseBodyEmitter || body instanceof StreamingResponseBody
				|| body instanceof DeferredResult || body instanceof CompletionStage || body instanceof Callable
				|| body instanceof WebAsyncTask
				|| (body != null && ReactiveAdapterRegistry.getSharedInstance().getAdapter(body.getClass()) != null);
	}

	@Override
	public String getMethod() {
		return this.request.getMethod();
	}

	@Override
	public @Nullable String getHeader(String name) {
		return this.request.getHeader(name);
	}

	@Override
	public List<String> getHeaders(String name) {
		return Collections.list(this.request.getHeaders(name));
	}

	@Override
	public @Nullable String getRemoteAddr() {
		return this.request.getRemoteAddr();
	}

	@Override
	public @Nullable Principal getUserPrincipal() {
		return this.request.getUserPrincipal();
	}

	@Override
	public Object getNativeRequest() {
		return this.request;
	}

	@Override
	public @Nullable Object getAttribute(String name) {
		return this.request.getAttribute(name);
	}

	@Override
	public void setAttribute(String name, Object value) {
		this.request.setAttribute(name, value);
	}

	/**
	 * Return the servlet request.
	 * @return the request
	 */
	public HttpServletRequest servletRequest() {
		return this.request;
	}

}
