package io.github.ratelimit.mcp;

import java.util.LinkedHashMap;
import java.util.Map;

import io.github.ratelimit.web.RateLimitException;
import io.modelcontextprotocol.spec.McpSchema;
import org.jspecify.annotations.Nullable;

import org.springframework.web.ErrorResponseException;

/**
 * What an agent is told, in MCP's terms: a rejected call is a tool result with {@code isError}, not a JSON-RPC error
 * nor an HTTP 429 in the middle of the session's stream, so that the model reads why and when to retry. Its text is
 * the problem's detail ("Rate limit of policy 'search' exceeded. Retry after 12 seconds."), and its {@code _meta}
 * says the same for a client's code, under {@value #META_KEY}: {@code status}, {@code policy} and
 * {@code retryAfterSeconds}. And the other way, a call's outcome as the HTTP status that {@code count-on} lists.
 */
final class McpToolResults {

	/** The key of the rejection's details in the result's {@code _meta}. */
	static final String META_KEY = "io.github.ratelimit/rate-limit";

	private McpToolResults() {
	}

	static McpSchema.CallToolResult rejection(ErrorResponseException rejection) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("status", rejection.getStatusCode().value());
		String detail = rejection.getBody().getDetail();
		if (rejection instanceof RateLimitException limit) {
			details.put("policy", limit.getPolicy().name());
			if (limit.getRetryAfterSeconds() > 0) {
				details.put("retryAfterSeconds", limit.getRetryAfterSeconds());
			}
		}
		return McpSchema.CallToolResult.builder()
			.isError(true)
			.addTextContent((detail != null) ? detail : "Rate limited")
			.meta(Map.of(META_KEY, details))
			.build();
	}

	/** 200 for a result, 500 for an error result or a call that threw: what {@code count-on: 5xx} counts. */
	static int httpStatus(McpSchema.@Nullable CallToolResult result) {
		return (result != null && !Boolean.TRUE.equals(result.isError())) ? 200 : 500;
	}

}
