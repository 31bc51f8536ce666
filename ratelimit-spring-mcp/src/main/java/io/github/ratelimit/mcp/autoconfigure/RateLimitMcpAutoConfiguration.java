package io.github.ratelimit.mcp.autoconfigure;

import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.engine.CurrentExchange;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.mcp.RateLimitedMcpTools;
import io.github.ratelimit.webmvc.ServletCurrentExchange;
import io.modelcontextprotocol.server.McpServerFeatures;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Role;
import org.springframework.util.ClassUtils;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration Auto-configuration} of {@code @RateLimited} on
 * the tools of a Spring AI MCP server (synchronous, the default): the post-processor that limits the calls of the
 * server's tool specifications. With limits switched off ({@code ratelimit.enabled=false}) there is no engine, and
 * every call goes through.
 *
 * @since 0.5.0
 */
@AutoConfiguration(after = RateLimitAutoConfiguration.class)
@ConditionalOnClass({ McpServerFeatures.class, RateLimitedMcpTools.class })
public final class RateLimitMcpAutoConfiguration {

	private static final String SERVLET_EXCHANGE = "io.github.ratelimit.webmvc.ServletCurrentExchange";

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean
	static RateLimitedMcpTools rateLimitedMcpTools(ObjectProvider<RateLimitEngine> engine,
			ConfigurableListableBeanFactory beanFactory) {
		return new RateLimitedMcpTools(engine, currentExchange(), beanFactory);
	}

	/** The servlet request a call comes in, if Spring MVC's adapters are there: its client and user make the call. */
	private static CurrentExchange currentExchange() {
		return ClassUtils.isPresent(SERVLET_EXCHANGE, RateLimitMcpAutoConfiguration.class.getClassLoader())
				? Servlet.currentExchange() : CurrentExchange.NONE;
	}

	/** Apart, so that nothing of Spring MVC is loaded without it. */
	private static final class Servlet {

		static CurrentExchange currentExchange() {
			return new ServletCurrentExchange();
		}

	}

}
