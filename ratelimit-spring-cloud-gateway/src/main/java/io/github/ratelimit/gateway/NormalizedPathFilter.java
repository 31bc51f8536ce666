package io.github.ratelimit.gateway;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.PathContainer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Refuses, before routing, a request whose path is not in its normal form: an empty segment ({@code //}, or one of
 * path parameters only), a dot segment ({@code .} or {@code ..}, encoded or not), or a segment holding an encoded
 * separator ({@code %2F}, {@code %5C}, {@code %3B}) or one encoded twice ({@code %252F}, {@code %252E}). Registered
 * unless {@code ratelimit.gateway.refuse-ambiguous-paths=false}. The gateway answers it 400 with a problem body, and it reaches neither a
 * route's limit nor the service.
 * <p>
 * Why refuse rather than clean the path up: the gateway matches its routes, and {@code ratelimit.filters} their paths,
 * against the path as sent, then merges repeated slashes when it forwards, and the service behind it may resolve dot
 * segments or decode a separator. So {@code /api//v1/resources} would miss the limited route, take a catch-all one, and
 * reach the limited handler as {@code /api/v1/resources}. Rewriting the path would have to clean it up exactly as every
 * service behind the gateway does; refused, no spelling is left to disagree about. Clients do not send such paths for a
 * resource: they resolve dot segments before sending (RFC 3986, section 5.2.4), and nothing needs {@code //}.
 * <p>
 * A trailing slash is a path of its own and passes: a route whose service ignores it lists both spellings in its
 * {@code Path} predicate (docs/web-stacks.md, "In Spring Cloud Gateway"); the filter layer matches both anyway. Letter case
 * passes here: a limited path in other case is refused next, by {@link PathCaseFilter}.
 *
 * @since 0.3.0
 */
public final class NormalizedPathFilter implements WebFilter, Ordered {

	/** Whether a decoded segment still holds an encoded '/', '\\', ';' or '.', {@code %252F} as sent. */
	private static boolean isEncodedAgain(String value) {
		for (int i = value.indexOf('%'); i >= 0 && i + 2 < value.length(); i = value.indexOf('%', i + 1)) {
			String code = value.substring(i + 1, i + 3).toUpperCase(Locale.ROOT);
			if (code.equals("2F") || code.equals("5C") || code.equals("3B") || code.equals("2E")) {
				return true;
			}
		}
		return false;
	}

	/** Before the filter layer ({@code ratelimit.filter-order}, -110 by default) and Spring Security (-100). */
	public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 1000;

	private static final byte[] PROBLEM = ("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
			+ "\"detail\":\"The request path is not in its normal form: it has an empty, '.' or '..' segment, or an "
			+ "encoded '/', backslash or ';', or one encoded twice. Send the path of the resource itself.\"}")
		.getBytes(StandardCharsets.UTF_8);

	@Override
	public int getOrder() {
		return ORDER;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		if (isNormalized(exchange.getRequest().getPath())) {
			return chain.filter(exchange);
		}
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(HttpStatus.BAD_REQUEST);
		response.getHeaders().setContentType(MediaType.APPLICATION_PROBLEM_JSON);
		return response.writeWith(Mono.just(response.bufferFactory().wrap(PROBLEM)));
	}

	/**
	 * Whether no segment of the path is empty or a dot segment, and none holds an encoded separator (a ';' in a
	 * segment's value was sent encoded: a raw one starts its parameters) or one encoded twice, which a service that
	 * decodes again would read as a separator or a dot; a trailing slash is allowed.
	 */
	static boolean isNormalized(PathContainer path) {
		String text = path.value();
		if (text.indexOf('%') < 0 && text.indexOf(';') < 0 && text.indexOf('.') < 0 && !text.contains("//")) {
			return true;
		}
		boolean afterSeparator = false;
		for (PathContainer.Element element : path.elements()) {
			if (element instanceof PathContainer.PathSegment segment) {
				String value = segment.valueToMatch();
				if (value.isEmpty() || ".".equals(value) || "..".equals(value) || value.indexOf('/') >= 0
						|| value.indexOf('\\') >= 0 || value.indexOf(';') >= 0 || isEncodedAgain(value)) {
					return false;
				}
				afterSeparator = false;
			}
			else if (afterSeparator) {
				return false; // two separators in a row: an empty segment
			}
			else {
				afterSeparator = true;
			}
		}
		return true;
	}

}
