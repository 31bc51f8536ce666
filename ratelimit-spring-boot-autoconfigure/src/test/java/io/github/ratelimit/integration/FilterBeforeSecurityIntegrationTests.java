package io.github.ratelimit.integration;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application with Spring Security, booted as a user's would be (every auto-configuration on the classpath): the
 * filter layer answers before Security's filter chain, so abusive traffic is turned away before authentication.
 */
class FilterBeforeSecurityIntegrationTests {

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@Test
	void theFilterLayerRejectsBeforeAuthentication() throws Exception {
		try (ConfigurableApplicationContext app = SpringApplication.run(SecuredApplication.class, "--server.port=0",
				"--ratelimit.store=memory", "--ratelimit.filters.edge.paths=/**", "--ratelimit.filters.edge.limit=2",
				"--ratelimit.filters.edge.window=1h", "--spring.security.user.password=secret")) {
			String base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
			assertThat(get(base + "/secured")).as("counted, then refused by Security").isEqualTo(401);
			assertThat(get(base + "/secured")).isEqualTo(401);
			HttpResponse<String> rejected = this.client.send(HttpRequest.newBuilder(URI.create(base + "/secured"))
				.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(rejected.statusCode()).as("refused before Security is asked").isEqualTo(429);
			assertThat(rejected.headers().firstValue("WWW-Authenticate")).isEmpty();
			assertThat(rejected.body()).contains("\"violated-policies\":[\"edge\"]");
		}
	}

	private int get(String uri) throws Exception {
		return this.client.send(HttpRequest.newBuilder(URI.create(uri)).build(), HttpResponse.BodyHandlers.discarding())
			.statusCode();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(SecuredController.class)
	static class SecuredApplication {

	}

	@RestController
	static class SecuredController {

		@GetMapping("/secured")
		String secured() {
			return "secret";
		}

	}

}
