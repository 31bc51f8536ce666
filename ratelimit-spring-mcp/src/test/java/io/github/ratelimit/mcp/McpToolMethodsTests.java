package io.github.ratelimit.mcp;

import java.util.Map;

import io.github.ratelimit.annotation.RateLimited;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.Test;

import org.springframework.ai.mcp.annotation.McpTool;
import org.springframework.ai.tool.annotation.Tool;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RootBeanDefinition;

import static org.assertj.core.api.Assertions.assertThat;

/** Which tools are limited, by the name a client calls them, and what key expressions see of their arguments. */
class McpToolMethodsTests {

	@Test
	void toolsAreNamedByTheirAnnotationOrElseTheirMethodWhetherMcpToolsOrTools() {
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.registerBeanDefinition("tools", new RootBeanDefinition(Tools.class));
		McpToolMethods methods = McpToolMethods.of(beanFactory);
		assertThat(methods.find("search")).isNotNull();
		assertThat(methods.find("lookUp")).isNotNull();
		assertThat(methods.find("weather")).isNotNull();
		assertThat(methods.find("unlimited")).as("a tool without limits").isNull();
		assertThat(methods.find("helper")).as("a limited method that is no tool").isNull();
	}

	@Test
	void argumentsAreTheCallsByParameterNameConvertedAsTheToolGetsThemSoNoSpellingIsAKeyOfItsOwn() {
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.registerBeanDefinition("tools", new RootBeanDefinition(Tools.class));
		McpToolMethods.Target weather = McpToolMethods.of(beanFactory).find("weather");
		assertThat(weather).isNotNull();
		assertThat(weather.arguments(call(Map.of("city", "Kyoto", "days", 3, "extra", "ignored")), null))
			.containsExactly("Kyoto", 3);
		assertThat(weather.arguments(call(Map.of("city", 42, "days", "3")), null)).containsExactly("42", 3);
		assertThat(weather.arguments(call(Map.of("city", "Kyoto", "days", 3.0)), null)).containsExactly("Kyoto", 3);
		assertThat(weather.arguments(call(Map.of("city", "Kyoto", "days", "three")), null))
			.containsExactly("Kyoto", null);
		assertThat(weather.arguments(call(Map.of("city", "Kyoto")), null)).containsExactly("Kyoto", null);
	}

	private static McpSchema.CallToolRequest call(Map<String, Object> arguments) {
		return new McpSchema.CallToolRequest("weather", arguments);
	}

	static class Tools {

		@McpTool(name = "search", description = "Search")
		@RateLimited(name = "searches", limit = 5, window = "1m")
		public String find(String query) {
			return query;
		}

		@McpTool(description = "Look up")
		@RateLimited(name = "lookups", limit = 5, window = "1m")
		public String lookUp(String id) {
			return id;
		}

		@Tool(name = "weather", description = "The weather")
		@RateLimited(name = "forecasts", limit = 5, window = "1m", cost = "#days")
		public String forecast(String city, int days) {
			return city + days;
		}

		@McpTool(name = "unlimited", description = "Free")
		public String unlimited() {
			return "free";
		}

		@RateLimited(name = "helpers", limit = 5, window = "1m")
		public String helper() {
			return "help";
		}

	}

}
