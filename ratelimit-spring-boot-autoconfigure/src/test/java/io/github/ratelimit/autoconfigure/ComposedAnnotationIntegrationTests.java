package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.integration.ApiLimit;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * An application's own annotation meta-annotated with {@code @RateLimited} ({@link ApiLimit}), on Spring MVC: its
 * attributes reach the policy through {@code @AliasFor}, on a method or on a class, alone or beside a plain
 * {@code @RateLimited}. (WebFlux: {@code WebFluxIntegrationTests}.)
 */
class ComposedAnnotationIntegrationTests {

	private final WebApplicationContextRunner runner = WebTestSupport.webApplication()
		.withUserConfiguration(InvoicesController.class, ReportsController.class);

	@Test
	void aComposedAnnotationLimitsWithTheValuesItPassesThrough() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/users/alice/invoices"))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Limit", "2"))
				.andExpect(header().string("RateLimit-Reset", "30"));
			mvc.perform(get("/users/alice/invoices")).andExpect(status().isOk());
			mvc.perform(get("/users/alice/invoices"))
				.andExpect(status().isTooManyRequests())
				.andExpect(jsonPath("$.policy").value("invoices"));
			// Keyed as the composed annotation declares: by user.
			mvc.perform(get("/users/bob/invoices")).andExpect(status().isOk());
		});
	}

	@Test
	void aComposedAnnotationOnTheClassLimitsEachHandlerMethod() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			mvc.perform(get("/users/carol/reports/daily"))
				.andExpect(status().isOk())
				.andExpect(header().string("RateLimit-Limit", "1"));
			mvc.perform(get("/users/carol/reports/daily")).andExpect(status().isTooManyRequests());
			// Each handler method has a policy of its own, named after it.
			mvc.perform(get("/users/carol/reports/monthly")).andExpect(status().isOk());
		});
	}

	@Test
	void aComposedAnnotationAndAPlainOneOnOneMethodAreBothDecided() {
		this.runner.run((context) -> {
			MockMvc mvc = WebTestSupport.mockMvc(context);
			// 3 a minute per user (composed), 4 an hour for everyone (plain): the plain one binds first overall.
			for (String user : new String[] { "dave", "dave", "dave", "erin" }) {
				mvc.perform(get("/users/" + user + "/exports")).andExpect(status().isOk());
			}
			mvc.perform(get("/users/dave/exports"))
				.andExpect(status().isTooManyRequests())
				.andExpect(jsonPath("$['violated-policies']").value(containsInAnyOrder("exports-user", "exports-all")));
			mvc.perform(get("/users/frank/exports"))
				.andExpect(status().isTooManyRequests())
				.andExpect(jsonPath("$['violated-policies']").value(contains("exports-all")));
		});
	}

	@RestController
	static class InvoicesController {

		@GetMapping("/users/{userId}/invoices")
		@ApiLimit(name = "invoices", perMinute = 2)
		String invoices(@PathVariable String userId) {
			return "invoices of " + userId;
		}

		@GetMapping("/users/{userId}/exports")
		@ApiLimit(name = "exports-user", perMinute = 3)
		@RateLimited(name = "exports-all", limit = 4, window = "1h", key = "'all'")
		String exports(@PathVariable String userId) {
			return "exports of " + userId;
		}

	}

	@RestController
	@ApiLimit(perMinute = 1)
	static class ReportsController {

		@GetMapping("/users/{userId}/reports/daily")
		String daily(@PathVariable String userId) {
			return "daily";
		}

		@GetMapping("/users/{userId}/reports/monthly")
		String monthly(@PathVariable String userId) {
			return "monthly";
		}

	}

}
