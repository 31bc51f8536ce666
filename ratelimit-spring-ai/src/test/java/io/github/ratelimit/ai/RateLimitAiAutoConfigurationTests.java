package io.github.ratelimit.ai;

import java.util.List;

import io.github.ratelimit.ai.autoconfigure.RateLimitAiAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration;
import io.github.ratelimit.autoconfigure.RateLimitDisabledAutoConfiguration;
import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import org.junit.jupiter.api.Test;

import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.ChatClientRequest;
import org.springframework.ai.chat.client.ChatClientResponse;
import org.springframework.ai.chat.client.advisor.api.CallAdvisorChain;
import org.springframework.ai.chat.client.advisor.api.CallAdvisor;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The token budgets: there with Spring AI, limiting nothing with limits switched off, gone without Spring AI, backing
 * off for the application's own; and a budget whose configuration cannot keep a debt fails the start-up.
 */
class RateLimitAiAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class,
				RateLimitDisabledAutoConfiguration.class, RateLimitAiAutoConfiguration.class))
		.withPropertyValues("ratelimit.store=memory");

	@Test
	void theBudgetsAreThereWithSpringAi() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(TokenBudgets.class));
	}

	@Test
	void withLimitsSwitchedOffTheBudgetsAreThereAndLimitNothing() {
		this.runner.withPropertyValues("ratelimit.enabled=false").run((context) -> {
			assertThat(context).hasSingleBean(TokenBudgets.class);
			CallAdvisor advisor = context.getBean(TokenBudgets.class).advisor("tokens");
			ChatClientResponse answer = new ChatClientResponse(new ChatResponse(List.of()), java.util.Map.of());
			CallAdvisorChain model = new CallAdvisorChain() {

				@Override
				public ChatClientResponse nextCall(ChatClientRequest request) {
					return answer;
				}

				@Override
				public List<CallAdvisor> getCallAdvisors() {
					return List.of();
				}

				@Override
				public CallAdvisorChain copy(CallAdvisor after) {
					return this;
				}

			};
			for (int i = 0; i < 5; i++) {
				assertThat(advisor.adviseCall(new ChatClientRequest(new Prompt("hi"), java.util.Map.of()), model))
					.isSameAs(answer);
			}
		});
	}

	@Test
	void withoutSpringAiThereAreNone() {
		this.runner.withClassLoader(new FilteredClassLoader(ChatClient.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(TokenBudgets.class));
	}

	@Test
	void theApplicationsOwnBudgetsAreKept() {
		this.runner.withUserConfiguration(OwnBudgets.class)
			.run((context) -> assertThat(context).hasSingleBean(TokenBudgets.class).hasBean("ownBudgets"));
	}

	@Test
	void aBudgetOnAFixedWindowFailsTheStartUpNamingTheWayOut() {
		this.runner.withUserConfiguration(BudgetedClient.class)
			.withPropertyValues("ratelimit.policies.tokens.limit=1000", "ratelimit.policies.tokens.window=1h",
					"ratelimit.policies.tokens.algorithm=fixed")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidRateLimitPolicyException.class)
				.hasMessageContaining("settle"));
	}

	@Test
	void aBudgetWithoutALimitFailsTheStartUpNamingTheProperty() {
		this.runner.withUserConfiguration(BudgetedClient.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("ratelimit.policies.tokens.limit"));
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnBudgets {

		@Bean
		TokenBudgets ownBudgets() {
			return TokenBudgets.unlimited();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class BudgetedClient {

		@Bean
		CallAdvisor budgetAdvisor(TokenBudgets budgets) {
			return budgets.advisor("tokens");
		}

	}

}
