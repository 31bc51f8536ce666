package io.github.ratelimit.mcp;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitDisabledAutoConfiguration;
import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.mcp.autoconfigure.RateLimitMcpAutoConfiguration;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Test;

import org.springframework.ai.mcp.annotation.McpTool;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tool specifications the MCP server gets: a limited tool's calls decided before it runs, others untouched, every
 * call let through with limits switched off; the post-processor absent without MCP; and two limited tools of one name
 * fail the start-up. The MCP server itself, over HTTP, is {@code sample-mcp-server}'s test.
 */
class RateLimitedMcpToolsTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitDisabledAutoConfiguration.class, RateLimitMcpAutoConfiguration.class))
		.withPropertyValues("ratelimit.store=memory")
		.withUserConfiguration(ToolSpecifications.class);

	@Test
	void aLimitedToolIsRefusedWithAnErrorResultAndItsToolDoesNotRun() {
		this.runner.run((context) -> {
			SyncToolSpecification search = tool(context.getBean("tools", List.class), "search");
			Tools tools = context.getBean(Tools.class);
			for (int i = 0; i < 2; i++) {
				assertThat(search.callHandler().apply(null, call("search")).isError()).isNotEqualTo(Boolean.TRUE);
			}
			McpSchema.CallToolResult refused = search.callHandler().apply(null, call("search"));
			assertThat(refused.isError()).isTrue();
			assertThat(((McpSchema.TextContent) refused.content().get(0)).text())
				.startsWith("Rate limit of policy 'searches' exceeded. Retry after");
			assertThat(tools.searches).hasValue(2);
			SyncToolSpecification other = tool(context.getBean("tools", List.class), "other");
			for (int i = 0; i < 5; i++) {
				assertThat(other.callHandler().apply(null, call("other")).isError()).isNotEqualTo(Boolean.TRUE);
			}
		});
	}

	@Test
	void withLimitsSwitchedOffEveryCallGoesThrough() {
		this.runner.withPropertyValues("ratelimit.enabled=false").run((context) -> {
			SyncToolSpecification search = tool(context.getBean("tools", List.class), "search");
			for (int i = 0; i < 5; i++) {
				assertThat(search.callHandler().apply(null, call("search")).isError()).isNotEqualTo(Boolean.TRUE);
			}
		});
	}

	@Test
	void withoutMcpThereIsNoPostProcessor() {
		this.runner.withClassLoader(new FilteredClassLoader(io.modelcontextprotocol.server.McpServerFeatures.class))
			.run((context) -> assertThat(context).doesNotHaveBean(RateLimitedMcpTools.class));
	}

	@Test
	void twoLimitedToolsOfOneNameFailTheStartUpNamingBoth() {
		this.runner.withUserConfiguration(SameName.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.isInstanceOf(InvalidRateLimitPolicyException.class)
				.hasMessageContaining("Tools#search")
				.hasMessageContaining("OtherTools#find"));
	}

	private static SyncToolSpecification tool(List<?> specifications, String name) {
		return specifications.stream()
			.map(SyncToolSpecification.class::cast)
			.filter((spec) -> spec.tool().name().equals(name))
			.findFirst()
			.orElseThrow();
	}

	private static McpSchema.CallToolRequest call(String tool) {
		return new McpSchema.CallToolRequest(tool, Map.of());
	}

	static class Tools {

		final AtomicInteger searches = new AtomicInteger();

		@McpTool(name = "search", description = "Search")
		@RateLimited(name = "searches", limit = 2, window = "1h", key = "'everyone'")
		public String search() {
			this.searches.incrementAndGet();
			return "found";
		}

	}

	static class OtherTools {

		@McpTool(name = "search", description = "Search again")
		@RateLimited(name = "finds", limit = 2, window = "1h")
		public String find() {
			return "found";
		}

	}

	/** The tools as the MCP server's auto-configuration gives them: a list bean of specifications. */
	@Configuration(proxyBeanMethods = false)
	@Import(Tools.class)
	static class ToolSpecifications {

		@Bean
		List<SyncToolSpecification> tools(Tools tools) {
			return List.of(specification("search", (exchange, request) -> McpSchema.CallToolResult.builder()
				.addTextContent(tools.search())
				.build()), specification("other", (exchange, request) -> McpSchema.CallToolResult.builder()
					.addTextContent("other")
					.build()));
		}

		private static SyncToolSpecification specification(String name,
				java.util.function.BiFunction<McpSyncServerExchange, McpSchema.CallToolRequest, McpSchema.CallToolResult> handler) {
			return new SyncToolSpecification(McpSchema.Tool.builder().name(name).inputSchema(
					new McpSchema.JsonSchema("object", Map.of(), List.of(), false, null, null)).build(), handler);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@Import(OtherTools.class)
	static class SameName {

	}

}
