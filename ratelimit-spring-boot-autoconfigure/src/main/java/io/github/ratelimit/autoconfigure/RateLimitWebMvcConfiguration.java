package io.github.ratelimit.autoconfigure;

import io.github.ratelimit.aop.RateLimitInterceptor;
import io.github.ratelimit.aop.RateLimitedAnnotationBeanPostProcessor;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.web.HandlerMethods;
import io.github.ratelimit.webmvc.MvcHandlerMethods;
import io.github.ratelimit.webmvc.RateLimitExceptionHandler;
import io.github.ratelimit.webmvc.RateLimitFilter;
import io.github.ratelimit.webmvc.ServletCurrentExchange;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * The engine on Spring MVC: the proxies of {@code @RateLimited} beans with their interceptor, the filter layer and the
 * 429 advice ({@link RateLimitStatusConfigurations} has the {@code RateLimitStatus} argument).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({ DispatcherServlet.class, RateLimitFilter.class })
class RateLimitWebMvcConfiguration {

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitedAnnotationBeanPostProcessor rateLimitedAnnotationBeanPostProcessor(
			ObjectProvider<RateLimitInterceptor> rateLimitInterceptor, Environment environment) {
		return RateLimitEngineConfiguration.proxies(rateLimitInterceptor, (targetClass) -> {
		}, environment);
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitInterceptor rateLimitInterceptor(RateLimitEngine engine) {
		return new RateLimitInterceptor(engine, new ServletCurrentExchange());
	}

	/**
	 * The filter layer, registered just before Spring Security's filter chain unless {@code ratelimit.filter-order}
	 * says otherwise. Registered even when no filter is configured: it settles the policies that count by outcome
	 * from the status the client gets.
	 */
	@Bean
	@ConditionalOnMissingBean(name = "rateLimitFilterRegistration")
	FilterRegistrationBean<RateLimitFilter> rateLimitFilterRegistration(RateLimitEngine engine,
			RateLimitProperties properties) {
		FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(new RateLimitFilter(engine));
		registration.setName("rateLimitFilter");
		registration.setOrder(properties.getFilterOrder());
		return registration;
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitExceptionHandler rateLimitExceptionHandler() {
		return new RateLimitExceptionHandler();
	}

	@Bean
	@ConditionalOnMissingBean
	HandlerMethods rateLimitHandlerMethods(ObjectProvider<RequestMappingHandlerMapping> handlerMappings) {
		return new MvcHandlerMethods(handlerMappings);
	}

}
