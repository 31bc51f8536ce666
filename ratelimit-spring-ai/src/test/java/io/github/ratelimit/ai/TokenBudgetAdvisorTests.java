package io.github.ratelimit.ai;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.conformance.MutableTimeSource;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.web.RateLimitExceededException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.ai.chat.client.ChatClient;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A {@code ChatClient} of Spring AI's OpenAI starter, pointed at a model server speaking OpenAI's API on a real port,
 * with a budget of 1,000 tokens per user: each call reserves its estimate, is rejected before the model is called when
 * the budget cannot cover it, and is settled to the usage the model reported, called or streamed, and to what it
 * streamed when its client leaves midway. The clock stands still, so the bucket refills nothing meanwhile.
 */
class TokenBudgetAdvisorTests {

	private static StubOpenAiServer model;

	private static ConfigurableApplicationContext app;

	private static ChatClient chat;

	@BeforeAll
	static void start() throws Exception {
		model = StubOpenAiServer.start();
		SpringApplication application = new SpringApplication(BudgetedChatApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		app = application.run("--ratelimit.store=memory", "--spring.ai.openai.base-url=" + model.baseUrl() + "/v1",
				"--spring.ai.openai.api-key=test-key", "--spring.ai.openai.chat.model=gpt-test",
				"--ratelimit.policies.tokens.limit=1000", "--ratelimit.policies.tokens.window=1h",
				"--ratelimit.policies.tokens.key=#context['user']",
				// What docs/ai.md tells users: a stream reports its usage only when asked to.
				"--spring.ai.openai.chat.stream-options.include-usage=true");
		chat = app.getBean(ChatClient.class);
	}

	@AfterAll
	static void stop() {
		app.close();
		model.close();
	}

	@Test
	void aCallIsSettledToItsUsageAndTheDebtRejectsTheNextCallBeforeTheModelIsCalled() {
		for (int i = 0; i < 3; i++) {
			assertThat(call("ada", "hi")).isEqualTo("Hello");
		}
		assertThat(remaining("ada")).isEqualTo(100);
		// The estimate (1 token) fits; the call costs 300, 200 more than the budget had.
		assertThat(call("ada", "hi")).isEqualTo("Hello");
		int asked = model.completions.get();
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> call("ada", "hi"))
			.withMessageContaining("tokens");
		assertThat(model.completions.get()).as("the model was not called").isEqualTo(asked);
		assertThat(call("grace", "hi")).as("another user's budget").isEqualTo("Hello");
	}

	@Test
	void aPromptTheBudgetCannotCoverIsRejectedBeforeTheModelIsCalledStreamedOrNot() {
		String longPrompt = "x".repeat(4_004); // about 1,001 tokens
		int asked = model.completions.get();
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> call("lin", longPrompt));
		assertThatExceptionOfType(RateLimitExceededException.class).isThrownBy(() -> chat.prompt()
			.user(longPrompt)
			.advisors((advisor) -> advisor.param("user", "lin"))
			.stream()
			.content()
			.collectList()
			.block(Duration.ofSeconds(10)));
		assertThat(model.completions.get()).isEqualTo(asked);
		assertThat(remaining("lin")).isEqualTo(1000);
	}

	@Test
	void aStreamIsSettledToTheUsageOfItsLastChunk() {
		List<String> parts = stream("max", "hi").collectList().block(Duration.ofSeconds(10));
		assertThat(String.join("", Objects.requireNonNull(parts))).isEqualTo("Hello");
		await().atMost(Duration.ofSeconds(10)).until(() -> remaining("max") == 700);
	}

	@Test
	void aStreamItsClientLeavesIsSettledToTheEstimateAndWhatItStreamed() {
		List<String> parts = stream("sam", "hi").take(2).collectList().block(Duration.ofSeconds(10));
		assertThat(parts).containsExactly("Hel", "lo");
		// 1 token estimated for the prompt, and "Hello" streamed: 5 characters, 2 tokens.
		await().atMost(Duration.ofSeconds(10)).until(() -> remaining("sam") == 997);
	}

	private static String call(String user, String prompt) {
		return chat.prompt().user(prompt).advisors((advisor) -> advisor.param("user", user)).call().content();
	}

	private static reactor.core.publisher.Flux<String> stream(String user, String prompt) {
		return chat.prompt().user(prompt).advisors((advisor) -> advisor.param("user", user)).stream().content();
	}

	private static long remaining(String user) {
		RateLimitPolicy tokens = Objects
			.requireNonNull(app.getBean(RateLimitEngine.class).catalog().policy("tokens"))
			.policy();
		return app.getBean(RateLimiter.class).peek(tokens, user).remaining();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class BudgetedChatApplication {

		@Bean
		MutableTimeSource rateLimitTimeSource() {
			return MutableTimeSource.at("2030-01-01T00:00:00Z");
		}

		/** As an application builds its client: the budget's advisor is there before start-up checks the policies. */
		@Bean
		ChatClient chatClient(ChatClient.Builder builder, TokenBudgets budgets) {
			return builder.defaultAdvisors(budgets.advisor("tokens")).build();
		}

	}

}
