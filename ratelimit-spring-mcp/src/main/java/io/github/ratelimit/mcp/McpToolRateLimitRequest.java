package io.github.ratelimit.mcp;

import java.util.HashMap;
import java.util.Map;

import io.github.ratelimit.web.CallRateLimitRequest;
import io.github.ratelimit.web.RateLimitRequest;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import org.jspecify.annotations.Nullable;

/**
 * A call of an MCP tool as the engine sees a request. Key, cost and skip expressions see the tool's arguments by
 * name (converted as the tool gets them), the call ({@code #request}: its {@code name()} and {@code arguments()}), the MCP session
 * ({@code #session}), the tool's name ({@code #tool}) and the client's own name for itself ({@code #clientName}, which
 * any client may choose). The HTTP request the call came in gives the client's address, headers and principal (Spring
 * Security's user: an OAuth client's token, a user), so that a limit keyed by {@code #clientIp} or {@code #principal}
 * is the caller's.
 */
final class McpToolRateLimitRequest extends CallRateLimitRequest {

	private final McpSyncServerExchange exchange;

	private final McpSchema.CallToolRequest call;

	McpToolRateLimitRequest(McpSyncServerExchange exchange, McpSchema.CallToolRequest call,
			@Nullable RateLimitRequest http) {
		super(http);
		this.exchange = exchange;
		this.call = call;
	}

	@Override
	public Object getNativeRequest() {
		return this.call;
	}

	@Override
	public Object getNativeExchange() {
		return this.exchange;
	}

	@Override
	public Map<String, Object> getExpressionVariables() {
		Map<String, Object> variables = new HashMap<>();
		String session = this.exchange.sessionId();
		if (session != null) {
			variables.put("session", session);
		}
		variables.put("tool", this.call.name());
		McpSchema.Implementation client = this.exchange.getClientInfo();
		if (client != null && client.name() != null) {
			variables.put("clientName", client.name());
		}
		return variables;
	}

}
