package io.github.ratelimit.sample.mcp;

import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;

/** An agent's MCP session with the sample over HTTP: Spring AI's MCP client (the MCP Java SDK's), as an agent runs it. */
final class McpAgent implements AutoCloseable {

	private final McpSyncClient client;

	private McpAgent(McpSyncClient client) {
		this.client = client;
	}

	/** Open a session of an agent, authenticated as it. */
	static McpAgent connect(String port, String agent) {
		String credentials = Base64.getEncoder()
			.encodeToString((agent + ":" + agent + "-secret").getBytes(StandardCharsets.UTF_8));
		HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport
			.builder("http://127.0.0.1:" + port)
			.requestBuilder(HttpRequest.newBuilder().header("Authorization", "Basic " + credentials))
			.build();
		McpSyncClient client = McpClient.sync(transport)
			.clientInfo(new McpSchema.Implementation(agent, "1.0"))
			.requestTimeout(Duration.ofSeconds(10))
			.build();
		client.initialize();
		return new McpAgent(client);
	}

	McpSchema.CallToolResult call(String tool, Map<String, Object> arguments) {
		return this.client.callTool(new McpSchema.CallToolRequest(tool, arguments));
	}

	static String text(McpSchema.CallToolResult result) {
		return ((McpSchema.TextContent) result.content().get(0)).text();
	}

	@Override
	public void close() {
		this.client.closeGracefully();
	}

}
