package io.github.ratelimit.ai.autoconfigure;

import io.github.ratelimit.ai.TokenBudgets;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitDisabledAutoConfiguration;
import io.github.ratelimit.engine.CurrentExchange;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.webmvc.ServletCurrentExchange;

import org.springframework.ai.chat.client.ChatClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

/**
 * {@link org.springframework.boot.autoconfigure.EnableAutoConfiguration Auto-configuration} of budgets of model tokens
 * for Spring AI's {@code ChatClient}: {@link TokenBudgets}, whose advisors reserve and settle tokens with the engine.
 * With limits switched off ({@code ratelimit.enabled=false}) the bean is still there, and limits nothing.
 *
 * @since 0.5.0
 */
@AutoConfiguration(after = { RateLimitAutoConfiguration.class, RateLimitDisabledAutoConfiguration.class })
@ConditionalOnClass({ ChatClient.class, TokenBudgets.class })
public final class RateLimitAiAutoConfiguration {

	private static final String SERVLET_EXCHANGE = "io.github.ratelimit.webmvc.ServletCurrentExchange";

	@Bean
	@ConditionalOnMissingBean
	TokenBudgets tokenBudgets(ObjectProvider<RateLimitEngine> engine) {
		RateLimitEngine available = engine.getIfAvailable();
		return (available != null) ? new TokenBudgets(available, currentExchange()) : TokenBudgets.unlimited();
	}

	/** The servlet request on the calling thread, if Spring MVC's adapters are there: its client pays for its calls. */
	private static CurrentExchange currentExchange() {
		ClassLoader loader = RateLimitAiAutoConfiguration.class.getClassLoader();
		return ClassUtils.isPresent(SERVLET_EXCHANGE, loader) ? Servlet.currentExchange() : CurrentExchange.NONE;
	}

	/** Apart, so that nothing of Spring MVC is loaded without it. */
	private static final class Servlet {

		static CurrentExchange currentExchange() {
			return new ServletCurrentExchange();
		}

	}

}
