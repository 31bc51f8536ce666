package io.github.ratelimit.sample.mcp;

import java.util.Map;

import io.github.ratelimit.conformance.MutableTimeSource;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample as agents use it, over HTTP with the MCP Java SDK's client, which Spring AI's MCP client starter builds
 * on: a limit per session, per client (two sessions of
 * one agent share its quota) and per tool, each rejection a tool result with {@code isError} that says which limit and
 * when to retry. The clock stands still, so no window ends meanwhile.
 */
class SampleMcpServerTests {

	private static ConfigurableApplicationContext app;

	private static String port;

	@BeforeAll
	static void start() {
		app = SpringApplication.run(new Class<?>[] { SampleMcpServer.class, StillClock.class },
				new String[] { "--server.port=0" });
		port = app.getEnvironment().getProperty("local.server.port");
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	@Test
	void aSessionGetsFiveSearchesThenAToolResultThatSaysWhenToRetry() {
		try (McpAgent session = McpAgent.connect(port, "agent-a")) {
			for (int i = 0; i < 5; i++) {
				McpSchema.CallToolResult result = session.call("search", Map.of("query", "lamps"));
				assertThat(result.isError()).isNotEqualTo(Boolean.TRUE);
				assertThat(McpAgent.text(result)).isEqualTo("3 products match 'lamps'");
			}
			McpSchema.CallToolResult refused = session.call("search", Map.of("query", "lamps"));
			assertThat(refused.isError()).isTrue();
			assertThat(McpAgent.text(refused))
				.matches("Rate limit of policy 'search-per-session' exceeded\\. Retry after \\d+ seconds\\.");
			assertThat(refused.meta()).containsKey("io.github.ratelimit/rate-limit");
			@SuppressWarnings("unchecked")
			Map<String, Object> details = (Map<String, Object>) refused.meta().get("io.github.ratelimit/rate-limit");
			assertThat(details).containsEntry("status", 429).containsEntry("policy", "search-per-session");
			assertThat(((Number) details.get("retryAfterSeconds")).longValue()).isBetween(1L, 60L);
		}
	}

	@Test
	void twoSessionsOfOneAgentShareItsQuotaAndAnotherAgentHasItsOwn() {
		try (McpAgent first = McpAgent.connect(port, "agent-b"); McpAgent second = McpAgent.connect(port, "agent-b")) {
			for (int i = 0; i < 4; i++) {
				assertThat(first.call("search", Map.of("query", "desks")).isError()).isNotEqualTo(Boolean.TRUE);
				assertThat(second.call("search", Map.of("query", "desks")).isError()).isNotEqualTo(Boolean.TRUE);
			}
			// 8 for the agent, 4 in each session: the agent's quota is spent, neither session's is.
			McpSchema.CallToolResult refused = second.call("search", Map.of("query", "desks"));
			assertThat(refused.isError()).isTrue();
			assertThat(McpAgent.text(refused)).startsWith("Rate limit of policy 'search-per-client' exceeded");
			assertThat(first.call("search", Map.of("query", "desks")).isError()).isTrue();
		}
	}

	@Test
	void eachToolHasItsOwnLimitAndAReportCostsItsPages() {
		try (McpAgent agent = McpAgent.connect(port, "agent-c")) {
			assertThat(agent.call("report", Map.of("pages", 12)).isError()).isNotEqualTo(Boolean.TRUE);
			McpSchema.CallToolResult refused = agent.call("report", Map.of("pages", 12));
			assertThat(refused.isError()).isTrue();
			assertThat(McpAgent.text(refused)).startsWith("Rate limit of policy 'report-pages' exceeded");
			assertThat(McpAgent.text(agent.call("report", Map.of("pages", 8)))).isEqualTo("A sales report of 8 pages");
			// Searching is limited apart.
			assertThat(agent.call("search", Map.of("query", "chairs")).isError()).isNotEqualTo(Boolean.TRUE);
		}
	}

	/** A clock that stands still: the windows of a minute never end during the test. */
	@Configuration(proxyBeanMethods = false)
	static class StillClock {

		@Bean
		MutableTimeSource rateLimitTimeSource() {
			return MutableTimeSource.at("2030-01-01T00:00:10Z");
		}

	}

}
