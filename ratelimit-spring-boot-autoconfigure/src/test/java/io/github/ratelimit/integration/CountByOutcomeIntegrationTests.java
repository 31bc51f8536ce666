package io.github.ratelimit.integration;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.annotation.RateLimited;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.server.ResponseStatusException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A login that counts only failed attempts ({@code countOn = "401"}), each failing in one of the ways a Spring
 * application answers 401: the count follows the status the client gets, whoever set it, on an application booted
 * as a user's is, with Spring Security in front.
 */
class CountByOutcomeIntegrationTests {

	private static ConfigurableApplicationContext app;

	private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@BeforeAll
	static void start() {
		app = SpringApplication.run(LoginApplication.class, "--server.port=0", "--ratelimit.store=memory",
				"--spring.security.user.password=secret");
	}

	@AfterAll
	static void stop() {
		app.close();
	}

	@ParameterizedTest
	@ValueSource(strings = { "set-status", "response-entity", "response-status-exception-class",
			"response-status-exception", "exception-handler", "controller-advice", "security-entry-point",
			"send-error", "completable-future", "deferred-result" })
	void onlyTheFailedAttemptsCountHoweverThe401IsWritten(String login) throws Exception {
		for (int i = 0; i < 5; i++) {
			assertThat(get(login, true)).as("a success, not counted").isEqualTo(200);
		}
		for (int i = 0; i < 3; i++) {
			assertThat(get(login, false)).as("a failure, counted").isEqualTo(401);
		}
		assertThat(get(login, false)).as("three failures are the limit").isEqualTo(429);
		assertThat(get(login, true)).as("rejected before the method runs").isEqualTo(429);
	}

	private int get(String login, boolean ok) throws Exception {
		String port = app.getEnvironment().getProperty("local.server.port");
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/login/" + login + "?ok=" + ok))
			.timeout(Duration.ofSeconds(10))
			.build();
		return this.client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import({ LoginController.class, LoginAdvice.class })
	static class LoginApplication {

		@Bean
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			return http.authorizeHttpRequests((requests) -> requests.requestMatchers("/login/**").permitAll())
				.httpBasic(Customizer.withDefaults())
				.csrf((csrf) -> csrf.disable())
				.build();
		}

	}

	@RestController
	static class LoginController {

		@RateLimited(name = "set-status", limit = 3, window = "1h", countOn = "401")
		@GetMapping("/login/set-status")
		void setStatus(@RequestParam boolean ok, HttpServletResponse response) {
			response.setStatus(ok ? 200 : 401);
		}

		@RateLimited(name = "response-entity", limit = 3, window = "1h", countOn = "401")
		@GetMapping("/login/response-entity")
		ResponseEntity<String> responseEntity(@RequestParam boolean ok) {
			return ResponseEntity.status(ok ? HttpStatus.OK : HttpStatus.UNAUTHORIZED).body("login");
		}

		@RateLimited(name = "response-status-exception-class", limit = 3, window = "1h", countOn = "401")
		@GetMapping("/login/response-status-exception-class")
		String responseStatusExceptionClass(@RequestParam boolean ok) {
			if (!ok) {
				throw new WrongPassword();
			}
			return "welcome";
		}

		@RateLimited(name = "response-status-exception", limit = 3, window = "1h", countOn = "401")
		@GetMapping("/login/response-status-exception")
		String responseStatusException(@RequestParam boolean ok) {
			if (!ok) {
				throw new ResponseStatusException(HttpStatus.UNAUTHORIZED);
			}
			return "welcome";
		}

		@RateLimited(name = "exception-handler", limit = 3, window = "1h", countOn = "401")
		@GetMapping("/login/exception-handler")
		String exceptionHandler(@RequestParam boolean ok) {
			if (!ok) {
				throw new IllegalStateException("wrong password");
			}
			return "welcome";
		}

		@ExceptionHandler(IllegalStateException.class)
		ResponseEntity<String> onIllegalState(IllegalStateException ex) {
			return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body(ex.getMessage());
		}

		@RateLimited(name = "controller-advice", limit = 3, window = "1h", countOn = "401")
		@GetMapping("/login/controller-advice")
		String controllerAdvice(@RequestParam boolean ok) {
			if (!ok) {
				throw new UnknownUser();
			}
			return "welcome";
		}

		@RateLimited(name = "security-entry-point", limit = 3, window = "1h", countOn = "401")
		@GetMapping("/login/security-entry-point")
		String securityEntryPoint(@RequestParam boolean ok) {
			if (!ok) {
				throw new BadCredentialsException("wrong password"); // Spring Security's entry point answers 401
			}
			return "welcome";
		}

		@RateLimited(name = "send-error", limit = 3, window = "1h", countOn = "401")
		@GetMapping("/login/send-error")
		void sendError(@RequestParam boolean ok, HttpServletResponse response) throws Exception {
			if (!ok) {
				response.sendError(401);
			}
		}

		@RateLimited(name = "completable-future", limit = 3, window = "1h", countOn = "401")
		@GetMapping("/login/completable-future")
		CompletableFuture<ResponseEntity<String>> completableFuture(@RequestParam boolean ok) {
			return CompletableFuture.supplyAsync(() -> {
				sleep();
				return ResponseEntity.status(ok ? HttpStatus.OK : HttpStatus.UNAUTHORIZED).body("login");
			});
		}

		@RateLimited(name = "deferred-result", limit = 3, window = "1h", countOn = "401")
		@GetMapping("/login/deferred-result")
		DeferredResult<ResponseEntity<String>> deferredResult(@RequestParam boolean ok) {
			DeferredResult<ResponseEntity<String>> result = new DeferredResult<>();
			new Thread(() -> {
				sleep();
				result.setResult(ResponseEntity.status(ok ? HttpStatus.OK : HttpStatus.UNAUTHORIZED).body("login"));
			}).start();
			return result;
		}

		/** Long enough for the request thread to have left the filter chain: the outcome comes later. */
		private static void sleep() {
			try {
				Thread.sleep(50);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

	@ResponseStatus(HttpStatus.UNAUTHORIZED)
	static class WrongPassword extends RuntimeException {

	}

	static class UnknownUser extends RuntimeException {

	}

	@RestControllerAdvice
	static class LoginAdvice {

		@ExceptionHandler(UnknownUser.class)
		ResponseEntity<String> onUnknownUser() {
			return ResponseEntity.status(HttpStatus.UNAUTHORIZED).body("unknown user");
		}

	}

}
