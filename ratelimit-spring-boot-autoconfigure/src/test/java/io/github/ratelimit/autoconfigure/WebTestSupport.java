package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.conformance.MutableTimeSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.context.WebApplicationContext;

/**
 * A servlet web application with Spring MVC, Jackson and rate limiting, on an in-memory store and a clock the test
 * controls, unless the test configures otherwise.
 */
final class WebTestSupport {

	static final String START = "2030-01-01T00:00:30Z";

	private WebTestSupport() {
	}

	static WebApplicationContextRunner webApplication() {
		return new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(JacksonAutoConfiguration.class,
					HttpMessageConvertersAutoConfiguration.class, DispatcherServletAutoConfiguration.class,
					WebMvcAutoConfiguration.class, RateLimitAutoConfiguration.class))
			.withBean(MutableTimeSource.class, () -> MutableTimeSource.at(START))
			.withPropertyValues("ratelimit.store=memory");
	}

	static MockMvc mockMvc(WebApplicationContext context) {
		return MockMvcBuilders.webAppContextSetup(context).build();
	}

}
