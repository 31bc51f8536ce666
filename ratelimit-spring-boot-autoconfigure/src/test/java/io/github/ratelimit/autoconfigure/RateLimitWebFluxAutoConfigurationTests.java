package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.aop.RateLimitInterceptor;
import io.github.ratelimit.aop.RateLimitedAnnotationBeanPostProcessor;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.webflux.RateLimitExceptionHandler;
import io.github.ratelimit.webflux.RateLimitWebFilter;
import io.github.ratelimit.webflux.ReactiveRateLimitInterceptor;
import io.github.ratelimit.webmvc.RateLimitFilter;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The conditions of the WebFlux configuration: a reactive application gets the reactive adapters and none of the
 * servlet ones, a servlet application the reverse, and every bean backs off for the application's own.
 */
class RateLimitWebFluxAutoConfigurationTests {

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
		.withPropertyValues("ratelimit.store=memory");

	@Test
	void aReactiveApplicationGetsTheWebFilterTheReactiveInterceptorAndTheAdviceButNoServletBean() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(RateLimitWebFilter.class)
			.hasSingleBean(ReactiveRateLimitInterceptor.class)
			.hasSingleBean(RateLimitExceptionHandler.class)
			.hasSingleBean(RateLimitedAnnotationBeanPostProcessor.class)
			.hasSingleBean(RateLimitEngine.class)
			.doesNotHaveBean(RateLimitInterceptor.class)
			.doesNotHaveBean(FilterRegistrationBean.class)
			.doesNotHaveBean(io.github.ratelimit.webmvc.RateLimitExceptionHandler.class));
	}

	@Test
	void theWebFilterRunsJustBeforeSpringSecurityAndItsOrderIsConfigurable() {
		this.runner.run((context) -> assertThat(context.getBean(RateLimitWebFilter.class).getOrder())
			.isEqualTo(RateLimitProperties.DEFAULT_FILTER_ORDER)
			.isLessThan(-100));
		this.runner.withPropertyValues("ratelimit.filter-order=42")
			.run((context) -> assertThat(context.getBean(RateLimitWebFilter.class).getOrder()).isEqualTo(42));
	}

	@Test
	void theWebFilterIsRegisteredWithoutFiltersToHandTheRequestToTheMethodLayer() {
		this.runner.run((context) -> assertThat(context.getBean(RateLimitWebFilter.class).hasFilters()).isFalse());
		this.runner
			.withPropertyValues("ratelimit.filters.edge.paths=/api/**", "ratelimit.filters.edge.limit=100",
					"ratelimit.filters.edge.window=1s")
			.run((context) -> assertThat(context.getBean(RateLimitWebFilter.class).hasFilters()).isTrue());
	}

	@Test
	void backsOffForTheApplicationsOwnWebFilterInterceptorAndAdvice() {
		this.runner.withUserConfiguration(OwnBeans.class)
			.run((context) -> assertThat(context).hasSingleBean(RateLimitWebFilter.class)
				.hasBean("ownFilter")
				.hasSingleBean(ReactiveRateLimitInterceptor.class)
				.hasBean("ownInterceptor")
				.hasSingleBean(RateLimitExceptionHandler.class)
				.hasBean("ownAdvice"));
	}

	@Test
	void withoutTheWebFluxModuleAReactiveApplicationGetsNoAdapter() {
		this.runner.withClassLoader(new FilteredClassLoader(RateLimitWebFilter.class))
			.run((context) -> assertThat(context).hasSingleBean(RateLimitEngine.class)
				.doesNotHaveBean(RateLimitedAnnotationBeanPostProcessor.class)
				.doesNotHaveBean(ReactiveRateLimitInterceptor.class));
	}

	@Test
	void aServletApplicationGetsNoReactiveBean() {
		new WebApplicationContextRunner().withConfiguration(AutoConfigurations.of(RateLimitAutoConfiguration.class))
			.withPropertyValues("ratelimit.store=memory")
			.run((context) -> assertThat(context).hasSingleBean(RateLimitInterceptor.class)
				.hasBean("rateLimitFilterRegistration")
				.doesNotHaveBean(RateLimitWebFilter.class)
				.doesNotHaveBean(ReactiveRateLimitInterceptor.class)
				.doesNotHaveBean(RateLimitExceptionHandler.class));
		assertThat(RateLimitFilter.class).isNotNull();
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnBeans {

		@Bean
		RateLimitWebFilter ownFilter(RateLimitEngine engine) {
			return new RateLimitWebFilter(engine, 7);
		}

		@Bean
		ReactiveRateLimitInterceptor ownInterceptor(RateLimitEngine engine) {
			return new ReactiveRateLimitInterceptor(engine);
		}

		@Bean
		RateLimitExceptionHandler ownAdvice() {
			return new RateLimitExceptionHandler();
		}

	}

}
