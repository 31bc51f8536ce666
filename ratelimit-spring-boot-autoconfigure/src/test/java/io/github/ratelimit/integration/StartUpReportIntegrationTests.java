package io.github.ratelimit.integration;

import io.github.ratelimit.annotation.RateLimited;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Applications booted as a user's would be say once started what is rate limited, or that {@code @RateLimited}
 * methods are not limited because the auto-configuration did not apply (as after a Spring Boot upgrade the starter
 * does not match).
 */
@ExtendWith(OutputCaptureExtension.class)
class StartUpReportIntegrationTests {

	private static final String NOT_LIMITED = "@RateLimited methods of ReportedController are not limited: "
			+ "RateLimitAutoConfiguration did not apply";

	@Test
	void aStartedApplicationSaysWhatIsLimitedByHowManyPoliciesInOneInfoLine(CapturedOutput output) {
		try (ConfigurableApplicationContext app = SpringApplication.run(ReportedApplication.class, "--server.port=0",
				"--ratelimit.store=memory", "--ratelimit.filters.edge.paths=/**", "--ratelimit.filters.edge.limit=100",
				"--ratelimit.filters.edge.window=1h")) {
			assertThat(output.getAll().lines().filter((line) -> line.contains("Rate limits: ")))
				.singleElement()
				.asString()
				.contains("INFO")
				.endsWith("Rate limits: 2 methods and 1 filter limited by 3 policies");
			assertThat(output.getAll()).doesNotContain(NOT_LIMITED);
		}
	}

	@Test
	void anApplicationWhoseAutoConfigurationDidNotApplyIsWarnedThatItsRateLimitedMethodsAreNotLimited(
			CapturedOutput output) {
		try (ConfigurableApplicationContext app = SpringApplication.run(ReportedApplication.class, "--server.port=0",
				"--spring.autoconfigure.exclude=io.github.ratelimit.autoconfigure.RateLimitAutoConfiguration")) {
			assertThat(output.getAll().lines().filter((line) -> line.contains(NOT_LIMITED))).singleElement()
				.asString()
				.contains("WARN");
			assertThat(output.getAll()).doesNotContain("Rate limits: ");
		}
	}

	@Test
	void anApplicationThatSwitchedRateLimitingOffIsNotWarned(CapturedOutput output) {
		try (ConfigurableApplicationContext app = SpringApplication.run(ReportedApplication.class, "--server.port=0",
				"--ratelimit.enabled=false")) {
			assertThat(output.getAll()).doesNotContain(NOT_LIMITED).doesNotContain("Rate limits: ");
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(ReportedController.class)
	static class ReportedApplication {

	}

	@RestController
	static class ReportedController {

		@RateLimited(name = "reported-one", limit = 10, window = "1h")
		@GetMapping("/one")
		String one() {
			return "one";
		}

		@RateLimited(name = "reported-two", limit = 10, window = "1h")
		@GetMapping("/two")
		String two() {
			return "two";
		}

	}

}
