package io.github.ratelimit.ai;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.github.ratelimit.conformance.MutableTimeSource;
import org.junit.jupiter.api.Test;

import org.springframework.ai.chat.client.ChatClient;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A chat endpoint of a Spring MVC application, over HTTP: the budget without a key is the HTTP client's (its address),
 * and a call the budget cannot cover is the client's 429, with {@code Retry-After} and the problem body.
 */
class ChatCallsInAWebRequestTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@Test
	void aBudgetWithoutAKeyIsTheHttpClientsAndItsRejectionIsA429WithRetryAfter() throws Exception {
		try (StubOpenAiServer model = StubOpenAiServer.start();
				ConfigurableApplicationContext app = SpringApplication.run(ChatApplication.class, "--server.port=0",
						"--ratelimit.store=memory", "--spring.ai.openai.base-url=" + model.baseUrl() + "/v1",
						"--spring.ai.openai.api-key=test-key", "--ratelimit.policies.tokens.limit=500",
						"--ratelimit.policies.tokens.window=1h")) {
			String port = app.getEnvironment().getProperty("local.server.port");
			assertThat(ask(port, "hi").statusCode()).isEqualTo(200);
			assertThat(ask(port, "hi").statusCode()).isEqualTo(200); // 600 spent: 100 in debt
			HttpResponse<String> rejected = ask(port, "hi");
			assertThat(rejected.statusCode()).isEqualTo(429);
			assertThat(rejected.headers().firstValue("Retry-After")).isPresent();
			assertThat(rejected.body()).contains("\"policy\":\"tokens\"");
			assertThat(model.completions.get()).isEqualTo(2);
		}
	}

	private HttpResponse<String> ask(String port, String prompt) throws Exception {
		return this.client.send(HttpRequest
			.newBuilder(URI.create("http://127.0.0.1:" + port + "/chat?prompt="
					+ URLEncoder.encode(prompt, StandardCharsets.UTF_8)))
			.timeout(Duration.ofSeconds(10))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(ChatController.class)
	static class ChatApplication {

		@Bean
		MutableTimeSource rateLimitTimeSource() {
			return MutableTimeSource.at("2030-01-01T00:00:00Z");
		}

		@Bean
		ChatClient chatClient(ChatClient.Builder builder, TokenBudgets budgets) {
			return builder.defaultAdvisors(budgets.advisor("tokens")).build();
		}

	}

	@RestController
	static class ChatController {

		private final ChatClient chat;

		ChatController(ChatClient chat) {
			this.chat = chat;
		}

		@GetMapping("/chat")
		String chat(@RequestParam String prompt) {
			return this.chat.prompt().user(prompt).call().content();
		}

	}

}
