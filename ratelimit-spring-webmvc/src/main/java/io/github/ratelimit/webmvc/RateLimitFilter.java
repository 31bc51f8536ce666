package io.github.ratelimit.webmvc;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RateLimitOutcome;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The filter layer on the servlet stack: limits applied before dispatch ({@code ratelimit.filters.*}), so that abusive
 * traffic is rejected before authentication, argument resolution and message conversion, and a path that matches no
 * handler still counts. The engine decides; this filter hands it the request and writes the outcome back (a
 * rejection as the method layer answers it: 429, headers, problem body).
 * <p>
 * It is also where policies that count by outcome, of every layer, are settled: once the whole chain has run, from
 * the status the client gets (after error handling and Spring Security's entry points), and for an asynchronous
 * request once it completes, however it ends (completed, failed, timed out, the client gone). So are the costs known
 * after the response of a method whose result is served asynchronously ({@code SseEmitter},
 * {@code StreamingResponseBody}, {@code DeferredResult}), from what its handler reported by then. So it is registered
 * even without filters; a request that no filter applies to, while no policy is settled after the response, passes
 * through it untouched.
 *
 * @since 0.2.0
 */
public final class RateLimitFilter extends OncePerRequestFilter {

	private final RateLimitEngine engine;

	/**
	 * Create the filter.
	 * @param engine the engine that decides
	 */
	public RateLimitFilter(RateLimitEngine engine) {
		this.engine = engine;
	}

	/**
	 * Return whether any filter is configured.
	 * @return whether the filter layer has filters
	 */
	public boolean hasFilters() {
		return this.engine.catalog().hasFilters();
	}

	/**
	 * Return the names of the filters, in the order they are decided.
	 * @return the names
	 */
	public List<String> filterNames() {
		return this.engine.catalog().filterNames();
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		PolicyCatalog catalog = this.engine.catalog();
		List<PathContainer> paths = catalog.hasFilters() ? paths(request) : List.of();
		boolean filtered = !paths.isEmpty() && catalog.hasFilterFor(request.getMethod(), paths);
		if (!filtered && !catalog.settlesAfterResponse()) {
			chain.doFilter(request, response); // nothing to decide here, nor to settle at the end
			return;
		}
		ServletRateLimitRequest limited = ServletRateLimitRequest.of(request, response);
		this.engine.settlement().settledByStack(limited);
		if (filtered) {
			RateLimitOutcome outcome = this.engine.decideFilters(limited, paths);
			limited.setResponseHeaders(outcome.headers());
			ErrorResponseException rejection = outcome.rejection();
			if (rejection != null) {
				// The instance as Spring MVC names the method layer's: the request URI, raw, context path included.
				reject(response, rejection, outcome.problemJson(request.getRequestURI()));
				return;
			}
		}
		boolean failed = true;
		try {
			chain.doFilter(request, response);
			failed = false;
		}
		finally {
			settle(limited, request, response, failed);
		}
	}

	/**
	 * The problem as the method layer's converter writes it: bytes, so that the content type names no charset (JSON
	 * is UTF-8), where text would have the container add one.
	 */
	private static void reject(HttpServletResponse response, ErrorResponseException rejection, String problem)
			throws IOException {
		byte[] body = problem.getBytes(StandardCharsets.UTF_8);
		response.setStatus(rejection.getStatusCode().value());
		response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

	/**
	 * Every layer's policies that count by outcome, from the status the client gets, and the costs of an asynchronous
	 * result: the container completes an asynchronous request however it ends.
	 */
	private void settle(ServletRateLimitRequest limited, HttpServletRequest request, HttpServletResponse response,
			boolean failed) {
		if (!this.engine.settlement().hasPendingSettlement(limited)) {
			return;
		}
		if (!failed && request.isAsyncStarted()) {
			request.getAsyncContext().addListener(new AsyncListener() {

				@Override
				public void onComplete(AsyncEvent event) {
					RateLimitFilter.this.engine.settlement().settleRequest(limited, response.getStatus());
				}

				@Override
				public void onTimeout(AsyncEvent event) {
				}

				@Override
				public void onError(AsyncEvent event) {
				}

				@Override
				public void onStartAsync(AsyncEvent event) {
				}

			});
			return;
		}
		this.engine.settlement().settleRequest(limited, failed ? 500 : response.getStatus());
	}

	/**
	 * The path within the application, and the path as the container decoded and normalized it (dot segments
	 * resolved, repeated slashes merged, path parameters removed) when it differs: what handler mappings match under
	 * {@code spring.mvc.pathmatch.matching-strategy=ant_path_matcher}. A filter applies if either matches, so no
	 * spelling of a path reaches a handler while its filters look away.
	 */
	private static List<PathContainer> paths(HttpServletRequest request) {
		PathContainer raw = RequestPath.parse(request.getRequestURI(), request.getContextPath()).pathWithinApplication();
		String text = raw.value();
		if (text.indexOf('%') < 0 && text.indexOf(';') < 0 && !text.contains("//") && !text.contains("/.")) {
			return List.of(raw);
		}
		String servletPath = request.getServletPath();
		String pathInfo = request.getPathInfo();
		String decoded = (pathInfo != null) ? servletPath + pathInfo : servletPath;
		return decoded.equals(text) ? List.of(raw) : List.of(raw, PathContainer.parsePath(decoded));
	}

}
